#!/usr/bin/env bash
# Fails if the ring structure of STYLE.md §1-2 is broken under ROOT:
#   - a file in a module's core/ or edge/ includes caf/ (quotes or brackets);
#   - a file in core/ or edge/ includes a header that lives in any shell/;
#   - a file in core/ includes a header that lives in any edge/ (cores do
#     no I/O and do not log).
# Usage: check_layering.sh ROOT
set -u
root=${1:?usage: check_layering.sh ROOT}
modules=(runtime cluster lease singleton sharding downing management bootstrap)
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

# Header sets as associative arrays: one lookup per include, not one grep
# per header per file (that took minutes on a loaded machine).
declare -A shell_set edge_set
while IFS= read -r h; do [ -n "$h" ] && shell_set[$h]=1; done < <(headers_of shell)
while IFS= read -r h; do [ -n "$h" ] && edge_set[$h]=1; done < <(headers_of edge)

check_includes() { # file, check edge headers too (0/1)
  local file=$1 with_edge=$2 inc
  while IFS= read -r inc; do
    if [ -n "${shell_set[$inc]:-}" ]; then
      echo "layering: $file includes shell header $inc"
      status=1
    fi
    if [ "$with_edge" = 1 ] && [ -n "${edge_set[$inc]:-}" ]; then
      echo "layering: $file includes edge header $inc"
      status=1
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^">]+)[">].*/\1/p' "$file")
}

for m in "${modules[@]}"; do
  for ring in core edge; do
    while IFS= read -r f; do
      [ -n "$f" ] || continue
      if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]caf/' "$f"; then
        echo "layering: $f ($ring) includes caf/"
        status=1
      fi
      if [ "$ring" = core ]; then check_includes "$f" 1; else check_includes "$f" 0; fi
    done < <(list_files "$root/$m/$ring")
  done
done

[ $status -eq 0 ] && echo "layering: ok"
exit $status
