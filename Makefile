# SPDX-License-Identifier: GPL-2.0
# dm-veil: one entry point.
#
#   make          build dm-target/dm-veil.ko for the guest kernel and
#                 userspace/veilsetup
#   make install  install both (module under /lib/modules/<ver>/extra)
#   make deps     install every build and test dependency (Debian, as root)
#   make test     deps + build + run the in-guest suite (T=pattern to filter)
#   make demo     deps + build + an encrypted volume on a loop file, in the guest
#   make bench    deps + build + fio: raw vs dm-crypt vs veil, in the guest
#   make bench-fs deps + build + file-system command times per cipher
#   make checkpatch   kernel style check of dm-target/
#   make debug-kernel build the debug guest kernel (KASAN, lockdep, kmemleak,
#                 fault injection) in build/linux-debug; reused when unchanged
#   make clean    remove build products but keep that kernel; distclean too
#
# KERNEL=stock (Debian's, the default) or KERNEL=debug picks the kernel the
# module is built for and the guest boots, e.g. `make test KERNEL=debug`.
# The module lands in build/modules/<release>/dm-veil.ko for either.

KERNEL ?= $(or $(VEIL_KERNEL),stock)
ifeq ($(filter stock debug,$(KERNEL)),)
$(error KERNEL must be stock or debug, not '$(KERNEL)')
endif
# The scripts (kver.sh, guest.sh, build-cramfs.sh, tests/run) read this.
export VEIL_KERNEL := $(KERNEL)

# Expanded when used (?= is recursive): the debug tree may only exist
# once the kernel target has run.
KVER ?= $(shell VEIL_KERNEL=$(KERNEL) scripts/kver.sh 2>/dev/null)
KDIR ?= $(shell VEIL_KERNEL=$(KERNEL) scripts/kver.sh kdir 2>/dev/null)
STOCK_KDIR = $(shell VEIL_KERNEL=stock scripts/kver.sh kdir 2>/dev/null)
# Where the module is compiled: the two kernels get separate object dirs
# (kbuild cannot put out-of-tree objects elsewhere), the debug one a copy.
ifeq ($(KERNEL),debug)
VEIL_OBJ := build/veil-debug
DEPS_ARGS := debug
else
VEIL_OBJ := dm-target
DEPS_ARGS :=
endif
VEIL_SRC := $(filter-out %.mod.c,$(wildcard dm-target/*.[ch])) dm-target/Kbuild dm-target/Makefile
CHECKPATCH := build/linux-source-6.1/scripts/checkpatch.pl

all: module veilsetup

veilsetup: check-build-deps
	$(MAKE) -C userspace

install: all
	install -D -m 0644 $(VEIL_OBJ)/dm-veil.ko $(DESTDIR)/lib/modules/$(KVER)/extra/dm-veil.ko
	install -D -m 0755 userspace/veilsetup $(DESTDIR)/usr/local/sbin/veilsetup
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

module: check-build-deps
ifeq ($(KERNEL),debug)
	@mkdir -p $(VEIL_OBJ)
	@for f in $(VEIL_SRC); do cmp -s $$f $(VEIL_OBJ)/$${f##*/} || cp $$f $(VEIL_OBJ)/; done
	@for f in $(VEIL_OBJ)/*.[ch]; do case $$f in *.mod.c) ;; *) [ -f dm-target/$${f##*/} ] || rm -f $$f ;; esac; done
endif
	$(MAKE) -C $(VEIL_OBJ) KDIR=$(KDIR)
	install -D -m 0644 $(VEIL_OBJ)/dm-veil.ko build/modules/$(KVER)/dm-veil.ko

# The debug kernel, when it is the one: a no-op while it is up to date.
kernel:
ifeq ($(KERNEL),debug)
	scripts/debug-kernel.sh
endif

debug-kernel:
	scripts/deps.sh debug
	scripts/debug-kernel.sh

# Say what is missing rather than fail deep inside kbuild.
check-build-deps: kernel
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		if [ "$(KERNEL)" = debug ]; then \
			echo "No debug kernel in build/linux-debug: run 'make debug-kernel'."; \
		else \
			echo "No Debian kernel image with matching headers found (need"; \
			echo "linux-image-amd64 and linux-headers-amd64): run 'make deps'."; \
		fi; \
		exit 1; \
	fi
	@for h in libcryptsetup.h libdevmapper.h; do \
		[ -f /usr/include/$$h ] || { echo "Missing /usr/include/$$h (libcryptsetup-dev, libdevmapper-dev): run 'make deps'."; exit 1; }; \
	done

deps:
	scripts/deps.sh $(DEPS_ARGS)

test: deps
	$(MAKE) all
	scripts/build-cramfs.sh
	scripts/build-test-modules.sh
	tests/run $(T)

demo: deps
	$(MAKE) all
	scripts/demo.sh

bench: deps
	scripts/deps.sh bench
	$(MAKE) all
	bench/run

bench-fs: deps
	scripts/deps.sh bench
	$(MAKE) all
	scripts/build-cramfs.sh
	bench/fs-run

$(CHECKPATCH):
	mkdir -p build
	tar -C build -xf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch

checkpatch: $(CHECKPATCH)
	perl $(CHECKPATCH) --no-tree --strict -f $(filter-out %.mod.c,$(wildcard dm-target/*.[ch]))

# Keeps build/linux-debug: rebuilding it takes 10-20 minutes.
clean:
	-$(MAKE) -C dm-target KDIR=$(STOCK_KDIR) clean
	-$(MAKE) -C userspace clean
	rm -rf build/modules build/cramfs build/test-modules build/veil-debug build/linux-source-6.1 tests/results

distclean: clean
	rm -rf build

.PHONY: all module kernel debug-kernel veilsetup install check-build-deps deps test demo bench bench-fs checkpatch clean distclean
