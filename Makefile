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

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /usr/src/linux-headers-$(KVER)
CHECKPATCH := build/linux-source-6.1/scripts/checkpatch.pl

all: module veilsetup

veilsetup: check-build-deps
	$(MAKE) -C userspace

install: all
	install -D -m 0644 dm-target/dm-veil.ko $(DESTDIR)/lib/modules/$(KVER)/extra/dm-veil.ko
	install -D -m 0755 userspace/veilsetup $(DESTDIR)/usr/local/sbin/veilsetup
	[ -n "$(DESTDIR)" ] || depmod -a $(KVER)

module: check-build-deps
	$(MAKE) -C dm-target KDIR=$(KDIR)

# Say what is missing rather than fail deep inside kbuild.
check-build-deps:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No Debian kernel image with matching headers found (need"; \
		echo "linux-image-amd64 and linux-headers-amd64): run 'make deps'."; \
		exit 1; \
	fi
	@for h in libcryptsetup.h libdevmapper.h; do \
		[ -f /usr/include/$$h ] || { echo "Missing /usr/include/$$h (libcryptsetup-dev, libdevmapper-dev): run 'make deps'."; exit 1; }; \
	done

deps:
	scripts/deps.sh

test: deps
	$(MAKE) all
	scripts/build-cramfs.sh
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

clean:
	-$(MAKE) -C dm-target KDIR=$(KDIR) clean
	-$(MAKE) -C userspace clean
	rm -rf build tests/results

.PHONY: all module veilsetup install check-build-deps deps test demo bench bench-fs checkpatch clean
