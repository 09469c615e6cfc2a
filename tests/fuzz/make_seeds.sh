#!/usr/bin/env bash
# Makes the seed corpora of the fuzz targets in OUT/<target>/ (tests/fuzz/run.sh calls it with
# its build directory's seeds/): real inputs of every kind each parser reads.
#
#   tests/fuzz/make_seeds.sh OUT PROFCOLLECT
#
# - perf.data: the 42 recorded files of tests/data/perf-data/, and fresh recordings of a small
#   program here (file mode, pipe mode, zstd-compressed, a `perf record --threads` directory);
# - perf script text: `perf script -F ip,brstack --show-mmap-events` of some of them;
# - binaries: programs of tests/fixtures/src and tests/fixtures/autofdo_src built by gcc and
#   clang-19 in several debug flavours (-g, -gdwarf-4, -gline-tables-only, -gz, -gsplit-dwarf
#   with their .dwo files, stripped with a .gnu_debuglink debug file, -fcf-protection, lld),
#   and their .debug_line and .eh_frame sections;
# - LLVM basic-block address maps: the .llvm_bb_addr_map sections of tests/fixtures/bb_addr_map_src
#   programs built by clang-19 with -fbasic-block-address-map, alone, with basic-block sections
#   (several ranges per function) and with the PGO analysis map;
# - live ring buffers: the records of the fresh recordings laid out as the kernel writes them;
# - /proc/PID/maps text of this script's processes;
# - BOLT address translation: the .note.bolt_bat of a tests/fixtures/bat_src program that
#   llvm-bolt-19 split with a profile of its own (no branch-stack hardware needed: no_lbr);
# - profile files: the output directory of a real live run of PROFCOLLECT (its own build), and
#   a samples.branch written from its documented format (no branch-stack hardware is needed);
#   that run's binary directory as two hosts' for merge;
# - the daemon's configuration: the example file shipped in systemd/ (the regressions hold one
#   that sets every key); control socket requests as `profcollect ctl` sends them, and a line
#   longer than the socket takes.
# The BPF counts target starts from its hand-made regression inputs (tests/fuzz/regressions/).
#
# Nothing is read outside the repository's tests/, the tools and /proc; nothing is written outside
# OUT. Made again only when this script, seed_inputs.py or the fixture sources change.
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: $0 OUT PROFCOLLECT" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
profcollect=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
py=$root/tests/fuzz/seed_inputs.py
fixtures=$root/tests/fixtures

key=$(cat "$0" "$py" "$root/systemd/profcollect.toml.example" "$fixtures"/src/*.c "$fixtures"/src/symbols/* "$fixtures"/autofdo_src/* "$fixtures"/bat_src/* \
    "$fixtures"/bb_addr_map_src/* |
    sha256sum | cut -c1-16)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$key" ]; then
    exit 0
fi
for tool in gcc g++ clang-19 clang++-19 ld.lld-19 llvm-bolt-19 objcopy strip readelf perf python3; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.work
mkdir -p "$work"
seed() { mkdir -p "$out/$1" && echo "$out/$1"; }

# ---- binaries ---------------------------------------------------------------------------------
bins=$work/bins
mkdir -p "$bins"
afdo=$fixtures/autofdo_src
src=$fixtures/src
hot_cpp="$afdo/hot_main.cpp $afdo/hot_work.cpp"
build() {  # build NAME COMPILER FLAGS... -- SOURCES...
    local name=$1 cc=$2
    shift 2
    "$cc" "$@" -o "$bins/$name" 2>/dev/null
}
build hot_gcc_g g++ -O2 -g $hot_cpp
build hot_gcc_dwarf4 g++ -O2 -gdwarf-4 $hot_cpp
build hot_gcc_O0 g++ -O0 -g $hot_cpp
build hot_gcc_gz g++ -O2 -g -gz $hot_cpp
build hot_clang_g clang++-19 -O2 -g $hot_cpp
build hot_clang_dwarf4 clang++-19 -O2 -gdwarf-4 $hot_cpp
build hot_clang_lt clang++-19 -O2 -gline-tables-only -fdebug-info-for-profiling $hot_cpp
build hot_clang_fs clang++-19 -O2 -gline-tables-only -fdebug-info-for-profiling \
    -mllvm -enable-fs-discriminator=true $hot_cpp
build hot_clang_cet clang++-19 -O2 -g -fcf-protection=full $hot_cpp
build hot_clang_lld clang++-19 -O2 -g --ld-path=ld.lld-19 $hot_cpp
build vec_clang clang++-19 -O2 -gline-tables-only $afdo/vec_main.cpp
build branchy_gcc gcc -O2 -g $afdo/branchy.c
build hot_c_gcc gcc -O2 -g $src/hot.c
build hot_c_clang_nopie clang-19 -O2 -g -no-pie $src/hot.c
build zoo_gcc gcc -O2 -g -I$src/symbols $src/symbols/zoo.c
build plt_lazy gcc -O2 -g -fno-builtin $src/symbols/plt.c -lm
build plt_ibt gcc -O2 -g -fno-builtin -fcf-protection=full -Wl,-z,ibtplt $src/symbols/plt.c -lm
build plt_got gcc -O2 -g -fno-builtin -DTAKE_ADDRESS $src/symbols/plt.c -lm
build libwork_gcc.so gcc -O2 -g -shared -fPIC $src/libwork.c
build hot_nodebug clang++-19 -O2 $hot_cpp

dwarf_bins="hot_gcc_g hot_gcc_dwarf4 hot_gcc_O0 hot_gcc_gz hot_clang_g hot_clang_dwarf4 hot_clang_lt
hot_clang_fs hot_clang_cet hot_clang_lld vec_clang branchy_gcc hot_c_gcc hot_c_clang_nopie zoo_gcc
plt_ibt libwork_gcc.so"
elf=$(seed elf_binary_fuzz)
dwarf=$(seed dwarf_fuzz)
lines=$(seed dwarf_line_table_fuzz)
eh=$(seed eh_frame_fuzz)
for b in $dwarf_bins plt_lazy plt_got hot_nodebug; do
    cp "$bins/$b" "$elf/$b"
done
for b in $dwarf_bins; do
    cp "$bins/$b" "$dwarf/$b"
    objcopy --decompress-debug-sections "$bins/$b" "$work/plain"
    objcopy --dump-section .debug_line="$lines/$b" "$work/plain" "$work/discard"
done
for b in hot_gcc_g hot_clang_g zoo_gcc plt_lazy libwork_gcc.so; do
    objcopy --dump-section .eh_frame="$work/eh" "$bins/$b" "$work/discard"
    python3 "$py" eh-frame "$eh/$b" "$work/eh"
done

# Stripped, with the debug information in a file .gnu_debuglink names, as a second part.
for b in hot_gcc_g hot_clang_lt zoo_gcc; do
    (cd "$work" &&
        objcopy --only-keep-debug "$bins/$b" "$b.debug" &&
        objcopy --strip-all --add-gnu-debuglink="$b.debug" "$bins/$b" "$b.stripped")
    python3 "$py" parts "$elf/${b}_debuglink" "$work/$b.stripped" "$b.debug=$work/$b.debug"
    python3 "$py" parts "$dwarf/${b}_debuglink" "$work/$b.stripped" "$b.debug=$work/$b.debug"
    cp "$work/$b.stripped" "$elf/${b}_stripped"
done

# Split DWARF: each unit compiled on its own, so that its .dwo is named after its object.
split() {  # split NAME COMPILER FLAGS...
    local name=$1 cc=$2
    shift 2
    local dir=$work/split_$name
    mkdir -p "$dir"
    (cd "$dir" &&
        "$cc" "$@" -gsplit-dwarf -c "$afdo/hot_main.cpp" -o hot_main.o &&
        "$cc" "$@" -gsplit-dwarf -c "$afdo/hot_work.cpp" -o hot_work.o &&
        "$cc" -o "$name" hot_main.o hot_work.o)
    python3 "$py" parts "$dwarf/$name" "$dir/$name" \
        "hot_main.dwo=$dir/hot_main.dwo" "hot_work.dwo=$dir/hot_work.dwo"
    cp "$dir/$name" "$elf/$name"
}
split split_clang clang++-19 -O2 -g
split split_clang_dwarf4 clang++-19 -O2 -gdwarf-4
split split_gcc g++ -O2 -g

# ---- LLVM basic-block address maps ------------------------------------------------------------
bbmap=$(seed bb_addr_map_fuzz)
bbsrc=$fixtures/bb_addr_map_src
pgo="-mllvm -pgo-analysis-map=func-entry-count,bb-freq,br-prob"
bb_seed() {  # bb_seed NAME COMPILER FLAGS... SOURCE: the section of that build, 64-bit little-endian
    local name=$1 cc=$2
    shift 2
    "$cc" -O2 -fbasic-block-address-map "$@" -o "$work/$name" 2>/dev/null
    objcopy --dump-section .llvm_bb_addr_map="$work/$name.section" "$work/$name" "$work/discard"
    python3 "$py" bb-addr-map "$bbmap/$name" "$work/$name.section"
}
bb_seed blocks clang-19 "$bbsrc/blocks.c"
bb_seed blocks_all clang-19 -fbasic-block-sections=all "$bbsrc/blocks.c"
bb_seed blocks_pgo clang-19 $pgo "$bbsrc/blocks.c"
bb_seed blocks_pgo_all clang-19 $pgo -fbasic-block-sections=all "$bbsrc/blocks.c"
bb_seed eh clang++-19 "$bbsrc/eh.cpp"

# ---- perf.data --------------------------------------------------------------------------------
file=$(seed perf_data_file_fuzz)
pipe=$(seed perf_data_pipe_fuzz)
dir=$(seed perf_data_directory_fuzz)
script=$(seed perf_script_fuzz)
ring=$(seed live_ring_buffer_fuzz)
cp "$root"/tests/data/perf-data/perf.data.* "$file/"
cp "$root"/tests/data/perf-data/perf.data.piped.* "$pipe/"
rec=$work/rec
mkdir -p "$rec"
cp "$bins/hot_c_gcc" "$rec/hot"
record() {  # record NAME PERF-RECORD-ARGS...: a short run of ./hot
    (cd "$rec" && perf record -q --buildid-mmap "$@" -- ./hot 10 >/dev/null 2>&1)
}
record -e cpu-clock -c 50000 -o fresh.data
record -e cpu-clock -c 50000 -z -o fresh_z.data || true
record -e cpu-clock -c 50000 --sample-cpu -o fresh_cpu.data
(cd "$rec" && perf record -q --buildid-mmap -e cpu-clock -c 50000 -o - -- ./hot 10 2>/dev/null >fresh_pipe.data)
record -e cpu-clock -c 50000 --threads -o fresh_threads.data || true
for f in fresh.data fresh_z.data fresh_cpu.data; do
    [ -s "$rec/$f" ] && cp "$rec/$f" "$file/$f"
done
cp "$rec/fresh_pipe.data" "$file/fresh_pipe.data"
cp "$rec/fresh_pipe.data" "$pipe/fresh_pipe.data"
cp "$rec/fresh.data" "$dir/single_file"
if [ -d "$rec/fresh_threads.data" ]; then
    parts=("$rec/fresh_threads.data/data")
    for p in $(cd "$rec/fresh_threads.data" && ls data.* 2>/dev/null | sort -t. -k2 -n); do
        parts+=("$rec/fresh_threads.data/$p")
    done
    python3 "$py" plain-parts "$dir/threads" "${parts[@]}"
fi
# The same recordings as a thread directory's pieces: a header file and one bare-record part.
python3 "$py" plain-parts "$dir/header_and_empty_part" "$rec/fresh.data" /dev/null

for f in "$rec/fresh.data" "$root"/tests/data/perf-data/perf.data.{branch-4.14,branch_stack_spec,singleprocess-3.8,lost_samples-4.4,remmap-3.2}; do
    name=$(basename "$f")
    perf script -F ip,brstack --show-mmap-events -i "$f" >"$script/$name.txt" 2>/dev/null ||
        perf script -F ip --show-mmap-events -i "$f" >"$script/$name.txt" 2>/dev/null || true
    [ -s "$script/$name.txt" ] || rm -f "$script/$name.txt"
    # With pid/tid and an event name, the other spellings the reader knows.
    perf script -F pid,tid,event,ip,brstack --show-mmap-events -i "$f" >"$script/$name.pid.txt" 2>/dev/null ||
        rm -f "$script/$name.pid.txt"
done
for f in "$rec/fresh.data" "$rec/fresh_cpu.data" "$root"/tests/data/perf-data/perf.data.{branch-4.14,singleprocess-3.8,lost_samples-4.4}; do
    python3 "$py" ring "$ring/$(basename "$f")" "$f"
done

# ---- /proc/PID/maps ---------------------------------------------------------------------------
maps=$(seed proc_maps_fuzz)
cat /proc/self/maps >"$maps/self"
cat /proc/$$/maps >"$maps/shell"

# ---- BOLT address translation -----------------------------------------------------------------
bat=$(seed bolt_address_translation_fuzz)
gcc -O2 -g -fPIE -pie -Wl,--emit-relocs -o "$work/bat_prog" "$fixtures/bat_src/bat_prog.c"
perf record -q -N --buildid-mmap -e cpu-clock -o "$work/bat.data" -- "$work/bat_prog" 2000000 >/dev/null
"$profcollect" convert -q -p "$work/bat.data" -o "$work/bat.fdata" "$work/bat_prog"
llvm-bolt-19 "$work/bat_prog" -o "$work/bat_prog.bolt" -data="$work/bat.fdata" -enable-bat \
    -reorder-blocks=ext-tsp -split-functions -split-all-cold >/dev/null
objcopy --dump-section .note.bolt_bat="$bat/split_pie" "$work/bat_prog.bolt" "$work/discard" 2>/dev/null
rm -f "$work/discard"

# ---- profile files ----------------------------------------------------------------------------
fdata=$(seed fdata_reader_fuzz)
branch=$(seed branch_samples_file_fuzz)
profile=$(seed profile_directory_fuzz)
live=$work/live
rm -rf "$live"
(cd "$rec" && "$profcollect" -q -e cpu-clock -F 2000 -o "$live" -- ./hot 10 >/dev/null)
bindir=$(ls -d "$live"/hot-* | head -1)
"$profcollect" convert -q -p "$rec/fresh.data" -o "$fdata/convert.fdata" "$rec/hot"
cp "$bindir/bolt.fdata" "$fdata/live.fdata"
cat >"$branch/documented" <<'EOF'
# profcollect branch samples 1
stacks 4
B 401126 401100 - 12 1
B 40113a 0 t 3 0
B 0 401100 f 2 0
B 0 0 ft 1 1
F 401100 401126 12
f 401100 40111f 2
R 401100 401126 9
T 401126 401100 9
T x 401100 2
T 40113a x 3
EOF
python3 "$py" plain-parts "$profile/live_no_lbr" "$bindir/meta.json" "$bindir/bolt.fdata" /dev/null \
    "$bindir/samples.ip" /dev/null "$live/collection.json"
sed 's/"no_lbr"/"branch"/' "$bindir/meta.json" >"$work/meta_branch.json"
python3 "$py" plain-parts "$profile/live_branch" "$work/meta_branch.json" /dev/null "$bindir/bolt.fdata" \
    "$bindir/samples.ip" "$branch/documented" "$live/collection.json"

# The run's binary directory on two hosts (files it did not write are left out: empty parts).
merge=$(seed profile_merge_fuzz)
or_empty() { if [ -f "$1" ]; then echo "$1"; else echo /dev/null; fi; }
host=()
for f in meta.json bolt.fdata bolt.nolbr.fdata bolt.preagg autofdo.prof samples.ip samples.branch; do
    host+=("$(or_empty "$bindir/$f")")
done
python3 "$py" plain-parts "$merge/live_two_hosts" "${host[@]}" "${host[@]}"

# ---- the daemon's configuration and control requests ------------------------------------------
config=$(seed daemon_config_fuzz)
cp "$root/systemd/profcollect.toml.example" "$config/example"
control=$(seed control_request_fuzz)
printf '%s\n' '{"cmd": "status"}' '{"cmd": "flush"}' '{"cmd": "reload"}' \
    '{"cmd": "kernel", "duration": 10}' >"$control/ctl_requests"
# A request longer than the socket reads (kMaxRequestBytes, 64 KiB), then one it never reads.
python3 -c 'import sys; sys.stdout.write("{\"cmd\": \"" + "x" * 70000 + "\"}\n{\"cmd\": \"status\"}\n")' \
    >"$control/long_line"

rm -rf "$work"
echo "$key" >"$out/.stamp"
