#!/usr/bin/env bash
# Checks that every C and C++ source follows .clang-format, as Debian 12's clang-format (14)
# formats it; the programs tests profile keep their layout (their own .clang-format says so).
# Lists the files that differ; `clang-format -i FILE` formats one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
format=${CLANG_FORMAT:-clang-format-14}
cd "$root"
mapfile -t files < <(find bpf collector mapper output record tests -type f \
                       \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) | sort)
unformatted=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "not formatted as .clang-format says (${#unformatted[@]} of ${#files[@]} files):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
