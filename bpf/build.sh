#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build every BPF congestion control in this directory with its default parameters against
# the running kernel's BTF: bpf/vmlinux.h (never committed) and bpf/build/<algo>.bpf.o.
# satcc itself builds through python/satcc/emu/bpf.py (one object per parameter set, cached);
# this script is for working on the C by hand:
#
#   bpf/build.sh                      # all programs
#   bpf/build.sh hybla cubic          # some
#   bpftool struct_ops register bpf/build/hybla.bpf.o    # as root: registers satcc_hybla
#   bpftool struct_ops unregister name satcc_hybla
#
# Needs: clang, bpftool, libbpf-dev (apt-get install clang llvm libbpf-dev bpftool) and a
# kernel with /sys/kernel/btf/vmlinux.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/build"
btf=/sys/kernel/btf/vmlinux

for tool in clang bpftool; do
	command -v "$tool" >/dev/null || { echo "$tool not found: apt-get install clang llvm libbpf-dev bpftool" >&2; exit 1; }
done
[ -r "$btf" ] || { echo "$btf missing: the kernel needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
[ -r /usr/include/bpf/bpf_helpers.h ] || { echo "libbpf headers missing: apt-get install libbpf-dev" >&2; exit 1; }

bpftool btf dump file "$btf" format c > "$here/vmlinux.h.tmp"
mv "$here/vmlinux.h.tmp" "$here/vmlinux.h"

# CUBIC reads the kernel's jiffies rate (CONFIG_HZ) at build time.
hz=""
if [ -r /proc/config.gz ]; then
	hz="$(zcat /proc/config.gz | sed -n 's/^CONFIG_HZ=//p')"
elif [ -r "/boot/config-$(uname -r)" ]; then
	hz="$(sed -n 's/^CONFIG_HZ=//p' "/boot/config-$(uname -r)")"
fi

mkdir -p "$out"
if [ $# -eq 0 ]; then
	set -- $(cd "$here" && ls *.bpf.c | sed 's/\.bpf\.c$//')
fi
for algo in "$@"; do
	extra=()
	if [ "$algo" = cubic ]; then
		[ -n "$hz" ] || { echo "cubic: CONFIG_HZ unknown (no /proc/config.gz or /boot/config-$(uname -r))" >&2; exit 1; }
		extra=("-DCUBIC_KERNEL_HZ=$hz")
	fi
	clang -g -O2 -target bpf -Wall -Werror -I "$here" "${extra[@]}" \
		-c "$here/$algo.bpf.c" -o "$out/$algo.bpf.o"
	echo "built $out/$algo.bpf.o"
done
