#!/usr/bin/env bash
# Proves check_layering.sh catches each planted violation and passes a clean
# tree, so the layering test cannot pass vacuously.
set -u
here=$(cd "$(dirname "$0")" && pwd)
check="$here/check_layering.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

make_tree() { # name
  local t="$tmp/$1"
  mkdir -p "$t/lease/core/troupe/lease" "$t/lease/edge/troupe/lease" \
           "$t/lease/shell/troupe/lease"
  echo '#pragma once' > "$t/lease/core/troupe/lease/a.hpp"
  echo '#include "troupe/lease/a.hpp"' > "$t/lease/edge/troupe/lease/b.hpp"
  printf '#include <caf/all.hpp>\n#include "troupe/lease/b.hpp"\n' \
    > "$t/lease/shell/troupe/lease/c.hpp"
  echo "$t"
}

expect() { # want(0|1) description tree
  "$check" "$3" >/dev/null
  local got=$?
  if [ "$got" -ne "$1" ]; then
    echo "selftest: $2: exit $got, wanted $1"
    fail=1
  fi
}

t=$(make_tree clean)
expect 0 "clean tree" "$t"

t=$(make_tree caf_in_core)
echo '#include <caf/actor.hpp>' >> "$t/lease/core/troupe/lease/a.hpp"
expect 1 "caf/ in core (brackets)" "$t"

t=$(make_tree caf_in_edge)
echo '#  include "caf/actor.hpp"' >> "$t/lease/edge/troupe/lease/b.hpp"
expect 1 "caf/ in edge (quotes)" "$t"

t=$(make_tree shell_in_core)
echo '#include "troupe/lease/c.hpp"' >> "$t/lease/core/troupe/lease/a.hpp"
expect 1 "shell header in core" "$t"

t=$(make_tree edge_in_core)
echo '#include "troupe/lease/b.hpp"' >> "$t/lease/core/troupe/lease/a.hpp"
expect 1 "edge header in core" "$t"

[ $fail -eq 0 ] && echo "selftest: ok"
exit $fail
