#!/bin/sh
# AutoFDO benchmarks, run by hand (not by ctest); needs perf access, clang++-19, llvm-19 tools,
# /usr/bin/time. Usage: autofdo_bench.sh [PROFCOLLECT]   (default: build/profcollect)
#
# 1. Conversion: about BENCH_SAMPLES (default 1000000) cpu-clock samples of one process of the
#    AutoFDO fixture program (tests/fixtures/autofdo_src, clang++-19 -O2 -gline-tables-only
#    -fdebug-info-for-profiling), converted by `profcollect convert --format autofdo` and by the
#    oracles.md pipeline (`perf script` + awk + `llvm-profgen-19 --leading-ip-only`): wall time
#    and peak RSS of each, their ratios, and whether the profiles are equal after
#    `llvm-profdata-19 merge --sample --text`.
# 2. Effect: the program rebuilt with -fprofile-sample-use=<our profile> against plain -O2,
#    medians of 7 alternating runs, printed as a ratio (below 1 is faster).
# 3. Debian 12's create_llvm_prof (package autofdo) on the same perf.data, to show why it is no
#    alternative (installed here if missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$here/bench_lib.sh"
pc=${1:-$repo/build/profcollect}
samples=${BENCH_SAMPLES:-1000000}
period=20000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
src=$repo/tests/fixtures/autofdo_src
flags="-O2 -gline-tables-only -fdebug-info-for-profiling"
clang++-19 $flags -o hot "$src/hot_main.cpp" "$src/hot_work.cpp"

# Calibrate the argument: samples per unit of work at this period.
perf record -q --buildid-mmap -e cpu-clock -c $period -o cal.data -- ./hot 100 >/dev/null 2>&1
cal=$(perf script -i cal.data -F ip 2>/dev/null | wc -l)
arg=$(( samples * 100 / (cal > 0 ? cal : 1) ))
echo "recording ~$samples samples (./hot $arg, -c $period)"
perf record -q --buildid-mmap -e cpu-clock -c $period -o big.data -- ./hot $arg >/dev/null 2>&1
echo "samples: $(perf script -i big.data -F ip 2>/dev/null | wc -l)"

autofdo_ip_vs_profgen "$pc" big.data ./hot

# 2. The program rebuilt with the profile.
clang++-19 $flags -fprofile-sample-use=ours.prof -o hot.pgo "$src/hot_main.cpp" "$src/hot_work.cpp"
clang++-19 $flags -o hot.o2 "$src/hot_main.cpp" "$src/hot_work.cpp"
for i in 1 2 3 4 5 6 7; do
  /usr/bin/time -f "%e" -a -o o2.times ./hot.o2 600 >/dev/null
  /usr/bin/time -f "%e" -a -o pgo.times ./hot.pgo 600 >/dev/null
done
mo2=$(sort -n o2.times | sed -n 4p); mpgo=$(sort -n pgo.times | sed -n 4p)
awk -v a="$mpgo" -v b="$mo2" 'BEGIN { printf "rebuilt with our profile: median %.3fs vs -O2 %.3fs, ratio %.3f\n", a, b, a/b }'

# 3. create_llvm_prof.
command -v create_llvm_prof >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq autofdo >/dev/null 2>&1 || true
if command -v create_llvm_prof >/dev/null; then
  create_llvm_prof --binary=./hot --profile=big.data --out=cl.prof --format=text >cl.log 2>&1 || true
  create_llvm_prof --binary=./hot --profile=big.data --out=cl.afdo >>cl.log 2>&1 || true
  echo "create_llvm_prof: text profile $(wc -c < cl.prof 2>/dev/null || echo missing) bytes," \
       "functions in its binary profile: $(llvm-profdata-19 merge --sample --text cl.afdo -o - 2>/dev/null | grep -c '^[^ ]' || true)"
  grep -m2 -E 'E[0-9]|rror' cl.log || true
fi
