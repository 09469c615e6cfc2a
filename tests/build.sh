#!/usr/bin/env bash
# Configures and builds profcollect and its tests into BUILD_DIR (default: build).
#
#   tests/build.sh [--target TARGET]... [CMAKE CONFIGURE ARGS...]
#
# --target builds only TARGET (and what it needs), e.g. `--target profcollect` for the tool
# alone, as tests/demo.sh does; the same build directory then builds the rest when tests/run.sh
# asks, without building again what it holds. The other arguments are passed to cmake's
# configure step (e.g. -DPROFCOLLECT_SANITIZE=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
targets=()
while [ $# -ge 2 ] && [ "$1" = "--target" ]; do
  targets+=(--target "$2")
  shift 2
done
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
