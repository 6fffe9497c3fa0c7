#!/usr/bin/env bash
# Command 1: set up, build, and run the built-in default study. Prints its
# tables (determinant updates, orbital precision, qs versus pbp VMC) and
# writes results.h5 (in the current directory unless
# -o is given). Extra arguments go to `slaterlab run`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release
exec "$root/build/release/slaterlab" run "$@"
