#!/bin/sh
# Kernel AutoFDO conversion benchmark, run by hand (not by ctest): a distribution vmlinux with
# DWARF and BENCH_SAMPLES (default 1000000) kernel IP samples spread over its text, converted by
# `profcollect convert --kernel` and by `llvm-profgen-19 --kernel --leading-ip-only` (the
# oracles.md recipe for IP samples): wall time and peak RSS of each, their ratios, and whether
# the profiles are equal after `llvm-profdata-19 merge --sample --text`.
#
# Usage: kernel_autofdo_bench.sh VMLINUX [PROFCOLLECT]      (default: build/profcollect)
# VMLINUX: e.g. Debian's linux-image-*-cloud-amd64-dbg, /usr/lib/debug/boot/vmlinux-VERSION
# (`apt-get download` the package and take the file out with `dpkg-deb --fsys-tarfile`).
#
# The samples are perf script text (`-F ip --show-mmap-events` as perf prints a kernel
# recording): perf's kernel mapping "[kernel.kallsyms]_text" at the vmlinux's _text plus a KASLR
# slide, then one instruction address a line, drawn with a fixed seed from every instruction of
# .text (llvm-objdump-19), so each lands on an instruction start. Both tools read the same
# samples; llvm-profgen gets them with the " 0x0/0x0/P/-/-/0" suffix its IP route needs.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 VMLINUX [PROFCOLLECT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
vmlinux=$(realpath "$1")
pc=${2:-$repo/build/profcollect}
samples=${BENCH_SAMPLES:-1000000}
slide=0x1e00000
# BENCH_KEEP=DIR: work in DIR and keep its files (the samples, both profiles) to look at.
if [ -n "${BENCH_KEEP:-}" ]; then
  work=$BENCH_KEEP; mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
cd "$work"

text=$(nm "$vmlinux" | awk '$3 == "_text" { print $1 }')
etext=$(nm "$vmlinux" | awk '$3 == "_etext" { print $1 }')
[ -n "$text" ] && [ -n "$etext" ] || { echo "$vmlinux: no _text/_etext symbols" >&2; exit 1; }
echo "vmlinux: $vmlinux ($(du -m "$vmlinux" | cut -f1) MB), build-id $(readelf -n "$vmlinux" | awk '/Build ID/ { print $3 }')"

llvm-objdump-19 -d --no-show-raw-insn --section=.text "$vmlinux" \
  | awk '/^ *[0-9a-f]+:/ { sub(":", "", $1); print $1 }' > insns
echo "instructions in .text: $(wc -l < insns)"
awk -v n="$samples" -v text="$text" -v etext="$etext" -v slide="$slide" '
  function hex(s,   i, v, c) { v = 0; for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c } return v }
  { a[NR] = $1 }
  END {
    srand(1)
    base = hex(substr(text, 9)); sl = hex(substr(slide, 3))
    start = sprintf("ffffffff%08x", base + sl)
    printf "PERF_RECORD_MMAP -1/0: [0x%s(0x%x) @ 0x%s]: x [kernel.kallsyms]_text\n", start, hex(substr(etext, 9)) - base, start
    for (i = 0; i < n; i++) {
      s = a[int(rand() * NR) + 1]
      printf " ffffffff%08x\n", hex(substr(s, 9)) + sl
    }
  }' insns > ip.script
awk '/PERF_RECORD_MMAP/ { print; next } { print $0 " 0x0/0x0/P/-/-/0" }' ip.script > ip.profgen.script
echo "samples: $(($(wc -l < ip.script) - 1)), distinct addresses: $(tail -n +2 ip.script | sort -u | wc -l)"

measure() {  # name command... -> prints "name seconds kib"
  name=$1; shift
  /usr/bin/time -f "%e %M" -o "$name.time" "$@" >/dev/null 2>"$name.err" || { cat "$name.err"; exit 1; }
  echo "$name: $(cut -d' ' -f1 "$name.time") s, $(cut -d' ' -f2 "$name.time") KiB"
}
measure profcollect "$pc" convert -q --kernel --perf-script ip.script --format autofdo -o ours.prof "$vmlinux"
measure llvm-profgen llvm-profgen-19 --kernel --perfscript=ip.profgen.script --binary="$vmlinux" \
  --leading-ip-only --format=text -o ref.prof
awk -v a="$(cut -d' ' -f1 profcollect.time)" -v b="$(cut -d' ' -f1 llvm-profgen.time)" \
    -v c="$(cut -d' ' -f2 profcollect.time)" -v d="$(cut -d' ' -f2 llvm-profgen.time)" \
    'BEGIN { printf "time ratio %.3f, memory ratio %.3f (profcollect / llvm-profgen)\n", a/b, c/d }'
llvm-profdata-19 merge --sample --text ours.prof -o ours.txt
llvm-profdata-19 merge --sample --text ref.prof -o ref.txt
echo "functions in the profile: $(grep -c '^[^ ]' ref.txt)"
if cmp -s ours.txt ref.txt; then echo "profiles: equal"; else echo "profiles: DIFFER ($(diff ours.txt ref.txt | grep -c '^[<>]') lines)"; fi
