#!/bin/sh
# Kernel AutoFDO conversion benchmark, run by hand (not by ctest): a distribution vmlinux with
# DWARF and kernel IP samples, converted by `profcollect convert --kernel` and by
# `llvm-profgen-19 --kernel --leading-ip-only` (the oracles.md recipe for IP samples): wall time
# and peak RSS of each, their ratios, and whether the profiles are equal after
# `llvm-profdata-19 merge --sample --text`. Two profiles (BENCH_MODE: both, the default;
# realistic; uniform):
#
# - realistic: what a kernel profile holds -- a few hundred functions. A kernel profile recorded
#   on this machine (`perf record -a -e cpu-clock:k` over a workload of file-system walks, pipes
#   and page-cache reads) gives each function its share of samples; the functions the vmlinux
#   also has get those shares, BENCH_REAL_SAMPLES (default 200000) samples drawn with a fixed
#   seed over each function's instruction starts.
# - uniform: BENCH_SAMPLES (default 1000000) samples drawn over every instruction start of .text.
#
# Usage: kernel_autofdo_bench.sh VMLINUX [PROFCOLLECT]      (default: build/profcollect)
# VMLINUX: e.g. Debian's linux-image-*-cloud-amd64-dbg, /usr/lib/debug/boot/vmlinux-VERSION
# (`apt-get download` the package and take the file out with `dpkg-deb --fsys-tarfile`).
#
# The samples are perf script text (`-F ip --show-mmap-events` as perf prints a kernel
# recording): perf's kernel mapping "[kernel.kallsyms]_text" at the vmlinux's _text plus a KASLR
# slide, then one instruction address a line, so each lands on an instruction start. Both tools
# read the same samples; llvm-profgen gets them with the " 0x0/0x0/P/-/-/0" suffix its IP route
# needs.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 VMLINUX [PROFCOLLECT]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
vmlinux=$(realpath "$1")
pc=${2:-$repo/build/profcollect}
samples=${BENCH_SAMPLES:-1000000}
real_samples=${BENCH_REAL_SAMPLES:-200000}
mode=${BENCH_MODE:-both}
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
# The perf script line of the kernel's mapping, and an address's line, for offsets from _text
# (awk's numbers are doubles: only the low 32 bits of a kernel address are computed with).
hex_awk='function hex(s,   i, v, c) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c } return v }'

uniform_samples() {  # -> ip.script
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
}

# A kernel profile of this machine: samples per function name (kallsyms), most first.
record_kernel_shares() {  # -> shares ("count name" lines)
  perf record -q --buildid-mmap -a -e cpu-clock:k -F 2000 -o k.data -- sh -c '
    end=$(($(date +%s) + 6))
    while [ "$(date +%s)" -lt "$end" ]; do
      find /usr /etc -xdev -type f >/dev/null 2>&1
      cat /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | wc -c >/dev/null
      dd if=/dev/zero bs=64k count=2000 2>/dev/null | cat >/dev/null
    done' >/dev/null 2>&1
  perf script -i k.data -F ip,sym 2>/dev/null | awk 'NF >= 2 { n[$2]++ } END { for (f in n) print n[f], f }' |
    sort -rn > shares
}

realistic_samples() {  # -> ip.script
  record_kernel_shares
  nm -S "$vmlinux" | awk '$3 ~ /^[Tt]$/ && $2 != "" { print $4, $1, $2 }' > functions
  # The recorded functions the vmlinux has (a name it has twice is left out: which one ran is
  # not known), with their shares, in address order.
  awk 'NR == FNR { n[$1]++; start[$1] = $2; size[$1] = $3; next }
       n[$2] == 1 { print $1, $2, start[$2], size[$2] }' functions shares | sort -k3,3 > chosen
  echo "kernel profile recorded here: $(awk '{ s += $1 } END { print s }' shares) samples in $(wc -l < shares) functions; $(wc -l < chosen) of them in the vmlinux"
  awk -v n="$real_samples" -v text="$text" -v etext="$etext" -v slide="$slide" "$hex_awk"'
    NR == FNR { w[FNR] = $1; total += $1; lo[FNR] = hex(substr($3, 9)); hi[FNR] = lo[FNR] + hex($4); f = FNR; next }
    { a = hex(substr($1, 9)); while (cur <= f && hi[cur] <= a) cur++
      if (cur <= f && a >= lo[cur]) { k = ++count[cur]; insn[cur, k] = a } }
    END {
      srand(1)
      base = hex(substr(text, 9)); sl = hex(substr(slide, 3))
      start = sprintf("ffffffff%08x", base + sl)
      printf "PERF_RECORD_MMAP -1/0: [0x%s(0x%x) @ 0x%s]: x [kernel.kallsyms]_text\n", start, hex(substr(etext, 9)) - base, start
      # Cumulative weights of the functions with instructions, then n draws.
      m = 0
      for (i = 1; i <= f; i++) if (count[i] > 0) { m++; id[m] = i; cum += w[i]; c[m] = cum }
      for (j = 0; j < n; j++) {
        r = rand() * cum; lo_i = 1; hi_i = m
        while (lo_i < hi_i) { mid = int((lo_i + hi_i) / 2); if (c[mid] > r) hi_i = mid; else lo_i = mid + 1 }
        i = id[lo_i]
        printf " ffffffff%08x\n", insn[i, int(rand() * count[i]) + 1] + sl
      }
    }' chosen insns > ip.script
}

measure() {  # name command... -> prints "name seconds kib"
  name=$1; shift
  /usr/bin/time -f "%e %M" -o "$name.time" "$@" >/dev/null 2>"$name.err" || { cat "$name.err"; exit 1; }
  echo "$name: $(cut -d' ' -f1 "$name.time") s, $(cut -d' ' -f2 "$name.time") KiB"
}
run() {  # label: both tools on ip.script
  echo "== $1"
  awk '/PERF_RECORD_MMAP/ { print; next } { print $0 " 0x0/0x0/P/-/-/0" }' ip.script > ip.profgen.script
  echo "samples: $(($(wc -l < ip.script) - 1)), distinct addresses: $(tail -n +2 ip.script | sort -u | wc -l)"
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
}

if [ "$mode" = both ] || [ "$mode" = realistic ]; then
  realistic_samples
  run "realistic: $real_samples samples over the functions of a kernel profile of this machine"
fi
if [ "$mode" = both ] || [ "$mode" = uniform ]; then
  uniform_samples
  run "uniform: $samples samples over every instruction start of .text"
fi
