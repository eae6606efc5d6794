# SPDX-License-Identifier: GPL-2.0
# dm-veil: one entry point.
#
#   make          build the module for the running kernel (uname -r; KVER=
#                 another installed one) in build/modules/<release>/, and
#                 userspace/veilsetup
#   make install  build and install both; module under /lib/modules/<release>/extra
#                 (make uninstall removes them; uninstall-veilsetup the tools only)
#   make dkms-install  the module through DKMS, for every installed kernel with
#                 headers and those installed later, and veilsetup;
#                 make dkms-remove undoes the module's part
#   make deb      Debian packages dm-veil-dkms and veilsetup in build/deb/
#   make deps     install every build and test dependency of the lab (Debian,
#                 as root): only make test, check, demo and bench need it
#   make test     deps + build + run the in-guest suite (T=pattern to filter,
#                 SET=name for one of the sets below)
#   make check    the fast subset for the edit loop (SET=check, about 5 min)
#   make demo     deps + build + an encrypted volume on a loop file, in the guest
#   make bench    deps + build + fio: raw vs dm-crypt vs veil, in the guest
#   make bench-fs deps + build + file-system command times per cipher
#   make bench-nbd deps + build + reads over NBD with network delay
#   make checkpatch   kernel style check of dm-target/
#   make debug-kernel build the debug guest kernel (KASAN, lockdep, kmemleak,
#                 fault injection) in ~/.cache/dm-veil (VEIL_CACHE), linked
#                 from build/linux-debug; reused while its inputs are unchanged
#   make clean    remove build products but keep that kernel; distclean too
#
# The kernel: for make, install and dkms-install the running one unless
# KVER names another (a full release with headers, or a series such as
# 6.12: the newest installed). The lab's targets (test, check, demo, bench*)
# boot one of Debian's kernels in /boot: KVER=6.1 (their default), 6.12 or
# a full release; KERNEL=debug the debug kernel instead.

KERNEL ?= $(or $(VEIL_KERNEL),stock)
ifeq ($(filter stock debug,$(KERNEL)),)
$(error KERNEL must be stock or debug, not '$(KERNEL)')
endif
KVER_GIVEN := $(filter command line environment,$(origin KVER))
LAB_GOALS := test check demo bench bench-fs bench-nbd
ifeq ($(KVER_GIVEN),)
KVER := $(if $(filter $(LAB_GOALS),$(MAKECMDGOALS)),6.1,$(shell uname -r))
endif
# The scripts (kver.sh, guest.sh, build-cramfs.sh, tests/run) read these.
export VEIL_KERNEL := $(KERNEL)
export VEIL_KVER := $(KVER)

# Expanded when used: the debug tree may only exist once the kernel
# target has run. REL is the kernel release, KDIR its build tree.
# (make 4.3's $(shell) does not see exported variables: pass them.)
KVER_ENV = VEIL_KERNEL=$(KERNEL) VEIL_KVER=$(KVER)
REL = $(shell $(KVER_ENV) scripts/kver.sh 2>/dev/null)
KDIR = $(shell $(KVER_ENV) scripts/kver.sh kdir 2>/dev/null)
# kbuild cannot put an external module's objects elsewhere: each kernel
# gets a copy of dm-target/ to build in, so dm-target/ stays source only.
OBJ = build/obj/$(REL)
VEIL_SRC := $(filter-out %.mod.c,$(wildcard dm-target/*.[ch])) dm-target/Kbuild dm-target/Makefile
DEPS_ARGS := $(if $(filter debug,$(KERNEL)),debug)
CHECKPATCH := build/linux-source-6.1/scripts/checkpatch.pl
# The package version, for DKMS and the Debian packages: debian/changelog.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

all: module veilsetup

veilsetup: check-userspace-deps
	$(MAKE) -C userspace

# copy-src DIR: dm-target's sources into DIR, stale ones out
define copy-src
	@mkdir -p $(1)
	@for f in $(VEIL_SRC); do cmp -s $$f $(1)/$${f##*/} || cp $$f $(1)/; done
	@for f in $(1)/*.[ch]; do case $$f in *.mod.c) ;; *) [ -f dm-target/$${f##*/} ] || rm -f $$f ;; esac; done
endef

module: check-build-deps
	$(call copy-src,$(OBJ))
	$(MAKE) -C $(OBJ) KDIR=$(KDIR)
	install -D -m 0644 $(OBJ)/dm-veil.ko build/modules/$(REL)/dm-veil.ko

install: module install-veilsetup
	install -D -m 0644 build/modules/$(REL)/dm-veil.ko $(DESTDIR)/lib/modules/$(REL)/extra/dm-veil.ko
	[ -n "$(DESTDIR)" ] || depmod -a $(REL)

# veilsetup, veiltab, the man page, the completion and the boot unit.
install-veilsetup: veilsetup
	install -D -m 0755 userspace/veilsetup $(DESTDIR)/usr/local/sbin/veilsetup
	install -D -m 0755 userspace/veiltab $(DESTDIR)/usr/local/sbin/veiltab
	install -D -m 0644 docs/veilsetup.8 $(DESTDIR)/usr/local/share/man/man8/veilsetup.8
	install -D -m 0644 userspace/veilsetup.bash-completion \
		$(DESTDIR)/usr/local/share/bash-completion/completions/veilsetup
	sed 's|/usr/sbin/veiltab|/usr/local/sbin/veiltab|' userspace/veiltab.service > veiltab.service.tmp
	install -D -m 0644 veiltab.service.tmp $(DESTDIR)/etc/systemd/system/veiltab.service
	rm -f veiltab.service.tmp

# What install and install-veilsetup put in place, out again.
uninstall: uninstall-veilsetup
	rm -f $(DESTDIR)/lib/modules/$(REL)/extra/dm-veil.ko
	[ -n "$(DESTDIR)" ] || depmod -a $(REL)

uninstall-veilsetup:
	rm -f $(DESTDIR)/usr/local/sbin/veilsetup $(DESTDIR)/usr/local/sbin/veiltab \
		$(DESTDIR)/usr/local/share/man/man8/veilsetup.8 \
		$(DESTDIR)/usr/local/share/bash-completion/completions/veilsetup \
		$(DESTDIR)/etc/systemd/system/veiltab.service

DKMS_SRC = $(DESTDIR)/usr/src/dm-veil-$(VERSION)

# The DKMS source tree: dkms.conf and the module's sources.
dkms-src:
	rm -rf $(DKMS_SRC)
	install -D -m 0644 -t $(DKMS_SRC)/dm-target $(VEIL_SRC)
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf

dkms-install: install-veilsetup
	@command -v dkms >/dev/null || { echo "dkms not found: install dkms (apt install dkms)"; exit 1; }
	-dkms remove dm-veil/$(VERSION) --all >/dev/null 2>&1
	$(MAKE) dkms-src
	dkms add dm-veil/$(VERSION)
	@for k in /lib/modules/*; do \
		[ -e $$k/build ] || { echo "dkms-install: no headers for $${k##*/}: skipped"; continue; }; \
		dkms install dm-veil/$(VERSION) -k $${k##*/} || exit 1; \
	done

dkms-remove:
	-dkms remove dm-veil/$(VERSION) --all
	rm -rf $(DKMS_SRC)

deb: check-userspace-deps
	scripts/build-deb.sh

# The debug kernel, when it is the one: a no-op while it is up to date.
kernel:
ifeq ($(KERNEL),debug)
	scripts/debug-kernel.sh
endif

debug-kernel:
	scripts/deps.sh debug
	scripts/debug-kernel.sh

# Say what is missing rather than fail deep inside kbuild.
check-build-deps: kernel check-userspace-deps
	@scripts/kver.sh >/dev/null
	@scripts/check-kernel.sh "$(REL)" "$(KDIR)"

check-userspace-deps:
	@for h in libcryptsetup.h libdevmapper.h json-c/json.h blkid/blkid.h; do \
		[ -f /usr/include/$$h ] || { echo "Missing /usr/include/$$h: apt install libcryptsetup-dev libdevmapper-dev libjson-c-dev libblkid-dev."; exit 1; }; \
	done
	@command -v cc >/dev/null || { echo "No C compiler: apt install gcc."; exit 1; }

deps:
	scripts/deps.sh $(DEPS_ARGS)

# The test sets, each a regex on test names, defined here only: the fast
# subset, and what each of .ci/run's stages runs (docs/testing.md says
# why). `make test SET=ci-6.12 KVER=6.12` runs a stage by hand.
SET_check := ^(dmsetup/00[1-6]|interop/001|table/001)-
SET_ci-6.1 := ^(dmsetup/0(0[1-689]|1[01])|interop/00[179]|veilsetup/00[18])-|^host/010-
SET_ci-6.12 := ^(interop/0(02|11)|table/003|engine/004|veilsetup/0(02|13))-|^host/007-
SET_ci-debug := ^engine/002-
ifneq ($(SET),)
ifeq ($(SET_$(SET)),)
$(error SET must be one of check ci-6.1 ci-6.12 ci-debug, not '$(SET)')
endif
T := $(SET_$(SET))
# A set checks interop/001's covering specs only: those that each bring a
# mode, cipher or IV generator (every spec in a plain make test), and
# table/003 compares 1,000 table lines with dm-crypt (3,000 in a plain
# make test; each run draws new ones).
export VEIL_INTEROP_COVERING ?= 1
export VEIL_DIFF_COUNT ?= 1000
endif

# The package test (tests/host/004-packages.sh) builds the .deb files.
test: deps
	scripts/deps.sh $(DEPS_ARGS) deb
	$(MAKE) all KVER=$(KVER)
	scripts/build-cramfs.sh
	scripts/build-test-modules.sh
	tests/run '$(T)'

check:
	$(MAKE) test SET=check

demo: deps
	$(MAKE) all KVER=$(KVER)
	scripts/demo.sh

bench: deps
	scripts/deps.sh bench
	$(MAKE) all KVER=$(KVER)
	bench/run

bench-fs: deps
	scripts/deps.sh bench
	$(MAKE) all KVER=$(KVER)
	scripts/build-cramfs.sh
	bench/fs-run

bench-nbd: deps
	scripts/deps.sh bench
	$(MAKE) all KVER=$(KVER)
	bench/nbd-run

$(CHECKPATCH):
	mkdir -p build
	tar -C build -xf /usr/src/linux-source-6.1.tar.xz \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch

checkpatch: $(CHECKPATCH)
	perl $(CHECKPATCH) --no-tree --strict -f $(filter-out %.mod.c,$(wildcard dm-target/*.[ch]))

# The debug kernel stays in its cache (rm -rf ~/.cache/dm-veil removes it).
clean:
	-$(MAKE) -C userspace clean
	rm -rf build/obj build/modules build/cramfs build/test-modules build/deb build/linux-source-6.1 tests/results

distclean: clean
	rm -rf build

.PHONY: all module kernel debug-kernel veilsetup install install-veilsetup uninstall uninstall-veilsetup dkms-src dkms-install dkms-remove deb check-build-deps check-userspace-deps deps test check demo bench bench-fs bench-nbd checkpatch clean distclean
