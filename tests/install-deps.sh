#!/usr/bin/env bash
# Installs what profcollect needs to build and what its tests use as judges, on Debian 12.
# Idempotent: does nothing when everything is already there.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config
  libelf-dev libdw-dev libzstd-dev libcli11-dev nlohmann-json3-dev libgtest-dev
  libboost-dev libcapstone-dev libbpf-dev bpftool libsystemd-dev libtomlplusplus-dev
  # the sources' format check (tests/check_format.sh)
  clang-format-14
  # judges and fixture tools (see README "Testing")
  linux-perf bolt-19 llvm-19 clang-19 lld-19 gcc binutils time
  # the service tests: a Debian 12 tree booted with systemd-nspawn
  debootstrap systemd-container
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
