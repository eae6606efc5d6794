# SPDX-License-Identifier: GPL-2.0
# dm-veil: one entry point.
#
#   make          build dm-target/dm-veil.ko for the guest kernel
#   make deps     install every build and test dependency (Debian, as root)
#   make test     deps + build + run the in-guest suite (T=pattern to filter)
#   make demo     deps + build + an encrypted volume on a loop file, in the guest
#   make bench    deps + build + fio: raw vs dm-crypt vs veil, in the guest
#   make checkpatch   kernel style check of dm-target/

KVER ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR ?= /usr/src/linux-headers-$(KVER)
CHECKPATCH := build/linux-source-6.1/scripts/checkpatch.pl

all: module

module: check-build-deps
	$(MAKE) -C dm-target KDIR=$(KDIR)

# Say what is missing rather than fail deep inside kbuild.
check-build-deps:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No Debian kernel image with matching headers found (need"; \
		echo "linux-image-amd64 and linux-headers-amd64): run 'make deps'."; \
		exit 1; \
	fi

deps:
	scripts/deps.sh

test: deps
	$(MAKE) all
	tests/run $(T)

demo: deps
	$(MAKE) all
	scripts/demo.sh

bench: deps
	scripts/deps.sh bench
	$(MAKE) all
	bench/run

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
	rm -rf build tests/results

.PHONY: all module check-build-deps deps test demo bench checkpatch clean
