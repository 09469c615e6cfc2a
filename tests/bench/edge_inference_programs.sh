# The programs edge_inference_bench.sh judges BOLT profiles on. Sourced by it (bash), which sets
# $repo (the repository) and $CC, $CFLAGS, $LDFLAGS.
#
# Each program NAME has:
#   NAME_build DIR   builds DIR/NAME (and whatever its workload reads) in DIR, with
#                    clang-19 $CFLAGS and $LDFLAGS (the bench's: -O2 -fno-pie; -no-pie lld
#                    --emit-relocs), its log in DIR/build.log, and writes DIR/run.sh:
#                    `run.sh [PREFIX...] BINARY` runs the workload once, from DIR, with PREFIX
#                    (valgrind, ...) in front of BINARY and its output to $OUT_FILE (default
#                    /dev/null). The output must not depend on the layout: the bench compares it.
#   NAME_runs        workload runs in one perf recording: fixed, so that every recording holds
#                    about the same number of samples (40-50K at -F 20000); fewer samples make
#                    a sampled profile worse.
#   NAME_what        a line saying what the workload is.
# A build is done once per work directory; NAME_stamp (flags, compiler, sources) says when it
# must be done again.
PROGRAMS="sqlite3 synth"

# write_run DIR 'ARGUMENTS AND REDIRECTIONS': the run.sh of a workload of one command.
write_run() {
    printf '#!/bin/sh\ncd "$(dirname "$0")" || exit 1\nexec "$@" %s >"${OUT_FILE:-/dev/null}"\n' \
        "$2" >"$1/run.sh"
    chmod +x "$1/run.sh"
}

# sqlite3 (tests/data/sqlite3, SQLite 3.5.7): the LLVM test-suite's speed test at a tenth of its
# size (smalltest.tcl writes test1.sql..test15.sql: inserts, selects, updates, joins, in
# :memory:). 530 KB of code; as built it misses the 32 KiB I1 1.4% of the time, the exact
# profile's layout takes that down by 46%. 0.09 s a run here.
sqlite3_runs=24
sqlite3_what="sqlite3 -init sqlite3rc :memory: < commands (smalltest.tcl's 15 scripts)"
sqlite3_stamp() { echo "$CC $CFLAGS $LDFLAGS $($CC --version | head -1)" "$(cat "$repo/tests/data/sqlite3"/*.c | cksum)"; }
sqlite3_build() {
    cp "$repo/tests/data/sqlite3"/* "$1"/ || return 1
    (
        cd "$1" || exit 1
        tclsh smalltest.tcl >/dev/null || exit 1
        for f in sqlite3 shell; do
            $CC $CFLAGS -std=gnu17 -w -DSTDC_HEADERS=1 -DHAVE_SYS_TYPES_H=1 -DHAVE_SYS_STAT_H=1 \
                -DHAVE_STDLIB_H=1 -DHAVE_STRING_H=1 -DHAVE_MEMORY_H=1 -DHAVE_STRINGS_H=1 \
                -DHAVE_INTTYPES_H=1 -DHAVE_STDINT_H=1 -DHAVE_UNISTD_H=1 \
                -DSQLITE_OMIT_LOAD_EXTENSION=1 -DSQLITE_THREADSAFE=0 -I. -c $f.c -o $f.o || exit 1
        done
        $CC $LDFLAGS -o sqlite3 sqlite3.o shell.o -lm
    ) >>"$1/build.log" 2>&1 || return 1
    write_run "$1" '-init sqlite3rc :memory: < commands'
}

# synth: a program written here (synth_source), the same from every awk (its random numbers are
# Park-Miller's, exact in doubles): 80 functions of branchy code, each a few hot blocks --
# branches taken 1% to 99% of the time, short loops, a switch, calls to deeper functions -- and
# at least five cold ones (a state that never comes, with its fprintf), called from a loop with
# shares of about 1/(k+1) (Zipf), on xorshift pseudo-random numbers. 230 KB of code, 58 KB of
# it hot (what BOLT keeps hot with the exact profile): as built, the hot blocks lie between cold
# ones and miss the 32 KiB I1 1.0% of the time; the exact profile's layout takes that down by
# 38% (sqlite3: 1.4%, by 46%). Where sqlite3 is one real interpreter loop, this is many hot
# functions of known branch biases with cold code everywhere, and it asks for edge counts: BOLT's
# block order from the counts of sampled addresses (nolbr, guess) is worse here than the
# compiler's (gains of -45% to -75%; +5% with ten times the samples), while its function order
# from them gets most of what the exact profile's does. (profcollect itself was tried first:
# its conversions keep their hot code inside 32 KiB, or, with DWARF, spend their misses in
# capstone's decoder and libc's printf, whose fixed addresses made the misses of a layout jump
# between 0.1M and 1M with no relation to its profile.) 0.16 s a run here.
synth_runs=14
synth_what="synth 4000000 (80 generated functions, called with Zipf shares)"
synth_stamp() { echo "$CC $CFLAGS $LDFLAGS $($CC --version | head -1)" "$(declare -f synth_source | cksum)"; }
synth_build() {
    synth_source >"$1/synth.c" || return 1
    (cd "$1" && $CC $CFLAGS -c synth.c -o synth.o && $CC $LDFLAGS -o synth synth.o) \
        >>"$1/build.log" 2>&1 || return 1
    write_run "$1" 4000000
}
# synth_wide: synth with 160 functions, some 470 KB of code (the Propeller bench's second program
# of a few hundred KB, beside sqlite3); not in PROGRAMS.
synth_wide_runs=7
synth_wide_what="synth_wide 4000000 (160 generated functions, called with Zipf shares)"
synth_wide_stamp() { echo "$CC $CFLAGS $LDFLAGS $($CC --version | head -1)" "$(declare -f synth_source | cksum) 160"; }
synth_wide_build() {
    synth_source 160 >"$1/synth_wide.c" || return 1
    (cd "$1" && $CC $CFLAGS -c synth_wide.c -o synth_wide.o && $CC $LDFLAGS -o synth_wide synth_wide.o) \
        >>"$1/build.log" 2>&1 || return 1
    write_run "$1" 4000000
}
# synth_source [FUNCTIONS]: the program's C source, with FUNCTIONS functions (default 80).
synth_source() {
    awk -v nfunc="${1:-80}" -v ncold=5 '
    function r(n) { seed = (seed * 16807) % 2147483647; return seed % n }
    function cold(f,   c) {
        printf "  if (x == %dULL) {\n", 1000000007 + r(1000000)
        for (c = 0; c < 10; c++)
            printf "    acc[%d] = acc[%d] * %dULL + x; x ^= acc[%d] >> %d;\n", r(16), r(16), 3 + 2 * r(1000), r(16), 1 + r(30)
        printf "    fprintf(stderr, \"f%d: rare state %%llu\\n\", x);\n  }\n", f
    }
    BEGIN {
        seed = 20241207
        split("2 8 32 128 224 248 254", bias)
        print "#include <stdio.h>\n#include <stdlib.h>\ntypedef unsigned long long u64;"
        print "static u64 st = 88172645463325252ULL;\nu64 acc[16];"
        print "static inline unsigned rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (unsigned)st; }"
        for (f = 0; f < nfunc; f++) print "u64 f" f "(u64);"
        for (f = 0; f < nfunc; f++) {
            print "__attribute__((noinline)) u64 f" f "(u64 x) {"
            nb = 3 + r(5)
            for (b = 0; b < nb; b++) {
                k = r(8)  # 0-3 a biased branch, 4 a loop, 5 a switch, 6 a call, 7 a cold block
                if (k < 4) {
                    printf "  if ((rnd() & 255) < %d) { x = x * %dULL + %d; acc[%d] += x; acc[%d] ^= x >> %d; } else { x ^= x >> %d; acc[%d] -= x; }\n", bias[1 + r(7)], 3 + 2 * r(1000), r(100000), r(16), r(16), 1 + r(40), 1 + r(40), r(16)
                } else if (k == 4) {
                    printf "  for (unsigned i = 0, n = rnd() & %d; i < n; i++) x += acc[(x + i) & 15] * %dULL;\n", (r(2) ? 3 : 7), 3 + 2 * r(1000)
                } else if (k == 5) {
                    printf "  switch (rnd() & 31) {\n"
                    for (c = 0; c < 6; c++)
                        printf "  case %d: x = (x << %d) ^ (x >> %d) ^ %dULL; acc[%d] ^= x; acc[%d] += x >> %d; break;\n", c, 1 + r(20), 1 + r(20), r(1000000), r(16), r(16), 1 + r(20)
                    printf "  default: x += %d; break;\n  }\n", r(1000)
                } else if (k == 6 && f + 1 < nfunc) {
                    printf "  if ((rnd() & 255) < %d) x = f%d(x ^ %d);\n", bias[1 + r(7)] / 4, f + 1 + r(nfunc - f - 1 < 40 ? nfunc - f - 1 : 40), r(1000)
                } else cold(f)
            }
            for (c = 0; c < ncold; c++) cold(f)
            print "  return x;\n}"
        }
        # Function f has about 4096 / H / (f + 1) of the 4096 slots of the table main draws from.
        for (f = 0; f < nfunc; f++) h += 1 / (f + 1)
        printf "static u64 (*const table[])(u64) = {"
        for (f = 0; f < nfunc; f++)
            for (i = int(4096 / h / (f + 1) + 0.5); i > 0; i--) printf "%sf%d", (s++ ? "," : ""), f
        print "};"
        print "int main(int argc, char **argv) {\n  long n = argc > 1 ? atol(argv[1]) : 1000000;\n  u64 x = 1;"
        print "  for (long i = 0; i < n; i++) x = table[rnd() % (sizeof table / sizeof table[0])](x + i);"
        print "  u64 s = x; for (int i = 0; i < 16; i++) s ^= acc[i];\n  printf(\"%llu\\n\", s);\n  return 0;\n}"
    }'
}
