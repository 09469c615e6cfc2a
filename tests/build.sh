#!/usr/bin/env bash
# Configures and builds profcollect and its tests into BUILD_DIR (default: build). Arguments are
# passed to cmake's configure step (e.g. -DPROFCOLLECT_SANITIZE=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
