#!/usr/bin/env bash
# Fails if the ring structure of STYLE.md §1-2 is broken under ROOT:
#   - a file in a module's core/ or edge/ includes caf/ (quotes or brackets);
#   - a file in core/ or edge/ includes a header that lives in any shell/;
#   - a file in core/ includes a header that lives in any edge/ (cores do
#     no I/O and do not log).
# Usage: check_layering.sh ROOT
set -u
root=${1:?usage: check_layering.sh ROOT}
modules=(runtime cluster lease singleton sharding downing management)
status=0

list_files() { # dir -> source files below it
  [ -d "$1" ] && find "$1" -type f \( -name '*.hpp' -o -name '*.cpp' \) | sort
}

headers_of() { # ring -> include paths (troupe/...) of that ring's headers
  local ring=$1 m
  for m in "${modules[@]}"; do
    [ -d "$root/$m/$ring" ] || continue
    (cd "$root/$m/$ring" && find . -type f -name '*.hpp' | sed 's|^\./||')
  done
}

mapfile -t shell_headers < <(headers_of shell)
mapfile -t edge_headers < <(headers_of edge)

check_includes() { # file, ring-name, headers...
  local file=$1 ring=$2
  shift 2
  local h
  for h in "$@"; do
    if grep -Eq "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]${h//./\\.}[>\"]" "$file"; then
      echo "layering: $file includes $ring header $h"
      status=1
    fi
  done
}

for m in "${modules[@]}"; do
  for ring in core edge; do
    while IFS= read -r f; do
      [ -n "$f" ] || continue
      if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]caf/' "$f"; then
        echo "layering: $f ($ring) includes caf/"
        status=1
      fi
      check_includes "$f" shell "${shell_headers[@]}"
      [ "$ring" = core ] && check_includes "$f" edge "${edge_headers[@]}"
    done < <(list_files "$root/$m/$ring")
  done
done

[ $status -eq 0 ] && echo "layering: ok"
exit $status
