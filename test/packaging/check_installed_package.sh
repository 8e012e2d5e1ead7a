#!/usr/bin/env bash
# integration:packaging:installed_example: troupe as an installed library
# (docs/guides/using-troupe-as-a-library.md), from a fresh install of BUILD:
#  1. `cmake --install BUILD --prefix P` into BUILD/packaging-test/prefix;
#  2. P holds the headers, libraries, CMake package, troupe.pc and
#     troupe-config, and nothing of the tests; every `#include "troupe/..."`
#     of an installed header resolves inside P;
#  3. the version file accepts what api-stability.md promises;
#  4. examples/ configured as a project of its own with
#     CMAKE_PREFIX_PATH=P (Ninja, ccache if present) finds P's package,
#     builds, and hello-cluster prints the singleton's and the entity's
#     answers and exits 0;
#  5. `pkg-config --cflags --libs troupe` compiles, links and runs
#     examples/pkg-config/lease_check.cpp; its Libs alone link
#     hello-cluster's object (a whole cluster application) and, with every
#     troupe library whole, every object troupe installs.
# Fails (never skips) naming the step and showing its log; the files stay
# in BUILD/packaging-test for a look (after a pass only the logs). The
# paths are fixed (not mktemp) so that ccache hits on the next run.
# Usage: check_installed_package.sh SOURCE_DIR BUILD_DIR LIBDIR VERSION [CMAKE]
set -u
src=${1:?usage: check_installed_package.sh SOURCE_DIR BUILD_DIR LIBDIR VERSION [CMAKE]}
build=${2:?missing BUILD_DIR}
libdir=${3:?missing LIBDIR}
version=${4:?missing VERSION}
cmake=${5:-cmake}
work=$build/packaging-test
prefix=$work/prefix
NAME=check_installed_package

say() { echo "$NAME: $*"; }
fail() { # MESSAGE [LOG FILE...]
  echo "$NAME: FAIL: $1"
  shift
  for f in "$@"; do
    [ -f "$f" ] && { echo "---- $f (last 60 lines)"; tail -60 "$f"; }
  done
  exit 1
}

rm -rf "$work"
mkdir -p "$work" || fail "cannot create $work"

# 1. The install.
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 \
  || fail "cmake --install $build --prefix $prefix failed" "$work/install.log"
say "installed into $prefix"

# 2. What is there, and what is not.
for f in include/troupe/version.hpp include/troupe/cluster_system.hpp \
  include/troupe/runtime/node.hpp include/troupe/runtime/config.hpp \
  include/troupe/runtime/http_engine.hpp include/troupe/lease/lease_handle.hpp \
  include/troupe/cluster/remoting.hpp include/troupe/downing/strategy.hpp \
  include/troupe/singleton/singleton.hpp include/troupe/sharding/sharding.hpp \
  include/troupe/management/management_service.hpp \
  "$libdir/libtroupe_system.a" "$libdir/libtroupe_runtime_core.a" \
  "$libdir/cmake/troupe/troupeConfig.cmake" \
  "$libdir/cmake/troupe/troupeConfigVersion.cmake" \
  "$libdir/cmake/troupe/troupeTargets.cmake" \
  "$libdir/cmake/troupe/FindCAF.cmake" "$libdir/cmake/troupe/Findc-ares.cmake" \
  "$libdir/pkgconfig/troupe.pc" \
  bin/troupe-config; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
for f in include/troupe/test include/troupe/chaos bin/troupe-demo \
  bin/troupe-demo-node bin/hello-lease bin/example-cluster-app; do
  [ -e "$prefix/$f" ] && fail "$f is installed (tests, the demo and the in-tree examples are not part of the package)"
done
leaked=$(find "$prefix" -name 'libtroupe_test*' -o -name 'libtroupe_chaos*' \
  -o -name 'libtroupe_demo*' -o -name '*_tests' -o -name 'fuzz_*')
[ -z "$leaked" ] || fail "test, demo or fuzz files are installed: $leaked"
# Every library the package exports is installed, and every installed
# library is exported.
exported=$(grep -o 'add_library(troupe::[a-z_]* ' \
  "$prefix/$libdir/cmake/troupe/troupeTargets.cmake" \
  | sed 's/add_library(troupe::\(.*\) /\1/' | sort)
installed=$(find "$prefix/$libdir" -maxdepth 1 -name 'libtroupe_*.a' -printf '%f\n' \
  | sed 's/^lib\(.*\)\.a$/\1/' | sort)
[ -n "$exported" ] || fail "troupeTargets.cmake exports no troupe:: target"
[ "$exported" = "$installed" ] \
  || fail "exported targets and installed libraries differ: $(diff <(echo "$exported") <(echo "$installed") | grep '^[<>]' | tr '\n' ' ')"
for t in troupe_runtime troupe_lease troupe_cluster troupe_downing \
  troupe_singleton troupe_sharding troupe_management troupe_system; do
  grep -qx "$t" <<<"$exported" || fail "troupe::$t is not exported"
done
missing=""
while IFS= read -r h; do
  while IFS= read -r inc; do
    [ -f "$prefix/include/$inc" ] || missing+=" ${h#"$prefix"/include/} -> $inc;"
  done < <(sed -n 's/^#include "\(troupe\/[^"]*\)".*/\1/p' "$h")
done < <(find "$prefix/include/troupe" -name '*.hpp')
[ -z "$missing" ] || fail "installed headers include headers that are not installed:$missing"
"$prefix/bin/troupe-config" --version >"$work/troupe-config.out" 2>&1 \
  || fail "the installed troupe-config --version failed" "$work/troupe-config.out"
grep -q "troupe $version" "$work/troupe-config.out" \
  || fail "the installed troupe-config does not say troupe $version" "$work/troupe-config.out"
say "layout ok ($(echo "$exported" | wc -l) libraries, $(find "$prefix/include" -name '*.hpp' | wc -l) headers)"

# 3. The version file's policy (api-stability.md): before 1.0 the same
# minor, a patch at least the one asked for; from 1.0 the same major.
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
if [ "$major" = 0 ]; then
  accept=("$major.$minor" "$version")
  refuse=("$major.$((minor + 1))" "$((major + 1)).0" "$major.$minor.$((${version##*.} + 1))")
  # An older minor: what SameMajorVersion would accept.
  [ "$minor" -gt 0 ] && refuse+=("$major.$((minor - 1))")
else
  accept=("$major.0" "$version")
  refuse=("$((major + 1)).0" "$major.$((minor + 1))" "$((major - 1)).0")
fi
version_file=$prefix/$libdir/cmake/troupe/troupeConfigVersion.cmake
cat >"$work/check_version.cmake" <<'EOF'
# What find_package(troupe ASKED) asks the version file.
string(REPLACE "." ";" parts "${PACKAGE_FIND_VERSION}.0.0")
list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
list(GET parts 2 PACKAGE_FIND_VERSION_PATCH)
set(CMAKE_SIZEOF_VOID_P 8)
include(${FILE})
if(PACKAGE_VERSION_COMPATIBLE)
  message("TRUE")
else()
  message("FALSE")
endif()
EOF
check_version() { # ASKED -> prints TRUE or FALSE
  "$cmake" -DPACKAGE_FIND_VERSION="$1" -DFILE="$version_file" \
    -P "$work/check_version.cmake" 2>&1
}
for v in "${accept[@]}"; do
  [ "$(check_version "$v")" = TRUE ] || fail "find_package(troupe $v) would refuse troupe $version"
done
for v in "${refuse[@]}"; do
  [ "$(check_version "$v")" = FALSE ] || fail "find_package(troupe $v) would accept troupe $version"
done
say "version file: accepts ${accept[*]}, refuses ${refuse[*]}"

# 4. examples/ as a project of its own against the install.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"$cmake" -S "$src/examples" -B "$work/examples-build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  "${launcher[@]}" >"$work/configure.log" 2>&1 \
  || fail "configuring examples/ against $prefix failed" "$work/configure.log"
found=$(sed -n 's/^troupe_DIR:PATH=//p' "$work/examples-build/CMakeCache.txt")
[ "$found" = "$prefix/$libdir/cmake/troupe" ] \
  || fail "examples/ found troupe in '$found', not in $prefix" "$work/configure.log"
"$cmake" --build "$work/examples-build" >"$work/build.log" 2>&1 \
  || fail "building examples/ against $prefix failed" "$work/build.log"
say "examples/ built against $prefix"

run_hello() { # BINARY OUT ERR
  timeout 120 "$1" >"$2" 2>"$3"
  local rc=$?
  [ $rc -eq 0 ] || fail "$1 exited with $rc (124: still running after 120 s)" "$2" "$3"
  grep -q "^hello, troupe, from the singleton on 127\.0\.0\.1:" "$2" \
    || fail "$1 printed no answer from the singleton" "$2" "$3"
  grep -q "^counter counter-1 is at 42 (shard [0-9]*)$" "$2" \
    || fail "$1 printed no answer from the entity" "$2" "$3"
  grep -q "troupe $version started node 127\.0\.0\.1:" "$3" \
    || fail "$1 logged no start line with troupe $version" "$2" "$3"
}
run_hello "$work/examples-build/hello-cluster" "$work/hello.out" "$work/hello.err"
say "hello-cluster answered: $(tr '\n' '|' <"$work/hello.out")"

# 5. pkg-config.
command -v pkg-config >/dev/null || fail "pkg-config is not installed"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
pkg-config --print-errors --exists troupe >"$work/pkg-config.log" 2>&1 \
  || fail "pkg-config does not find troupe (or its Requires)" "$work/pkg-config.log"
[ "$(pkg-config --modversion troupe)" = "$version" ] \
  || fail "pkg-config says troupe $(pkg-config --modversion troupe), not $version"
read -r -a cflags <<<"$(pkg-config --cflags troupe)"
read -r -a libs <<<"$(pkg-config --libs troupe)"
cxx=${CXX:-c++}
"$cxx" -std=c++20 "${cflags[@]}" -c "$src/examples/pkg-config/lease_check.cpp" \
  -o "$work/lease_check.o" >"$work/pc-compile.log" 2>&1 \
  || fail "compiling lease_check.cpp with pkg-config --cflags failed" "$work/pc-compile.log"
"$cxx" "$work/lease_check.o" -o "$work/lease_check" "${libs[@]}" \
  >"$work/pc-link.log" 2>&1 \
  || fail "linking lease_check with pkg-config --libs failed" "$work/pc-link.log"
"$work/lease_check" >"$work/lease_check.out" 2>&1 \
  || fail "lease_check failed" "$work/lease_check.out"
grep -q "^troupe headers $version, library $version$" "$work/lease_check.out" \
  || fail "lease_check did not print troupe $version" "$work/lease_check.out"
obj=$(find "$work/examples-build" -name 'hello_cluster.cpp.o' | head -1)
[ -n "$obj" ] || fail "no hello_cluster.cpp.o in $work/examples-build"
"$cxx" "$obj" -o "$work/hello-cluster-pc" "${libs[@]}" >"$work/pc-link-hello.log" 2>&1 \
  || fail "linking hello-cluster with pkg-config --libs alone failed" "$work/pc-link-hello.log"
run_hello "$work/hello-cluster-pc" "$work/hello-pc.out" "$work/hello-pc.err"
troupe_libs=()
other_libs=()
for l in "${libs[@]}"; do
  case $l in -ltroupe_*) troupe_libs+=("$l") ;; *) other_libs+=("$l") ;; esac
done
"$cxx" "$work/lease_check.o" -o "$work/lease_check_whole" \
  -Wl,--whole-archive "${troupe_libs[@]}" -Wl,--no-whole-archive \
  "${other_libs[@]}" >"$work/pc-link-whole.log" 2>&1 \
  || fail "every installed object does not link with pkg-config --libs (a dependency missing from troupe.pc)" "$work/pc-link-whole.log"
say "pkg-config: lease_check and hello-cluster built with troupe.pc alone"
# The install is half a gigabyte (static libraries with debug information):
# only the logs stay after a pass.
rm -rf "$prefix" "$work/examples-build"
say "PASS"
