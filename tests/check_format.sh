#!/usr/bin/env bash
# Fails when any C++ or proto file in the tree differs from what clang-format would write.
set -euo pipefail
cd "$1"
fmt=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$fmt" ]; then echo "clang-format not installed" >&2; exit 1; fi
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.h' '*.cc' '*.proto' 2>/dev/null ||
  find . -path ./build -prune -o \( -name '*.h' -o -name '*.cc' -o -name '*.proto' \) -print)
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: clang-format -i $f)"
    bad=1
  fi
done
exit $bad
