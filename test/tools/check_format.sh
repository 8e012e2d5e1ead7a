#!/usr/bin/env bash
# Fails if any C++ file tracked under ROOT differs from clang-format's output.
# Usage: check_format.sh ROOT
set -u
root=${1:?usage: check_format.sh ROOT}
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "format: clang-format missing"; exit 1; }
mapfile -t files < <(find runtime cluster lease singleton sharding downing bootstrap apps \
  bench test examples -type f \( -name '*.hpp' -o -name '*.cpp' \) 2>/dev/null | sort)
[ ${#files[@]} -gt 0 ] || { echo "format: no files found under $root"; exit 1; }
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "format: run clang-format -i on the files above"
  exit 1
fi
echo "format: ${#files[@]} files ok"
