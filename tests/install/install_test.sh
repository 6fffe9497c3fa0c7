#!/bin/bash
# Installs the build into a fresh prefix and uses it as a QMC code would
# (docs/library.md):
#   1. cmake --install of the build tree;
#   2. examples/reference_and_delayed configured and built as an external
#      project that knows only the prefix (find_package(slaterlab)), and run:
#      its exit code says whether the delayed update kept to its bounds;
#   3. the same example built by the compiler alone from slaterlab.pc, run on
#      a matrix read from a file, and refusing a malformed one (exit 2);
#   4. the installed package names no path of the source or build tree
#      (it is relocatable), and the installed `slaterlab` runs.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER
set -euo pipefail
build=$1 source=$2 work=$3 generator=$4 cxx=$5
prefix=$work/prefix
rm -rf "$work"
mkdir -p "$work"

step() { echo "== $*"; }

step "install into $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for path in bin/slaterlab lib/cmake/slaterlab/slaterlabConfig.cmake lib/pkgconfig/slaterlab.pc \
            include/slaterlab/strategies/determinant/delayed_update.hpp \
            include/slaterlab/reference/mp.hpp; do
  [[ -e $prefix/$path ]] || { echo "not installed: $path"; exit 1; }
done
if grep -rlF -e "$source" -e "$build" "$prefix/lib/cmake" "$prefix/lib/pkgconfig"; then
  echo "the installed package names the source or build tree (above): not relocatable"
  exit 1
fi
"$prefix/bin/slaterlab" --version

step "external CMake project: find_package(slaterlab)"
cmake -S "$source/examples/reference_and_delayed" -B "$work/example" -G "$generator" \
      -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
      >"$work/configure.log"
cmake --build "$work/example" >"$work/build.log"
"$work/example/reference_and_delayed"

step "pkg-config: slaterlab.pc"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046  # the flags are words
"$cxx" -std=c++20 -O1 "$source/examples/reference_and_delayed/reference_and_delayed.cpp" \
       -o "$work/example_pc" $(pkg-config --cflags --libs slaterlab)
# A user's matrix from a file: the 8 x 8 Vandermonde matrix of the points
# 1 + j/2 with rows scaled to 1, condition number 3e6, so that the bounds'
# condition numbers matter.
awk 'BEGIN { for (i = 0; i < 8; ++i) { for (j = 0; j < 8; ++j)
               printf "%.17g ", ((1 + j / 2) / 4.5) ^ i; print "" } }' >"$work/matrix.txt"
"$work/example_pc" "$work/matrix.txt" --moves 24 --k 4
printf '1 2\n3\n' >"$work/ragged.txt"
status=0
"$work/example_pc" "$work/ragged.txt" 2>"$work/ragged.err" || status=$?
[[ $status == 2 ]] || { echo "a ragged matrix gave exit $status, not 2"; exit 1; }
grep -q "row 2 has 1 numbers" "$work/ragged.err" || { cat "$work/ragged.err"; exit 1; }
step "ok"
