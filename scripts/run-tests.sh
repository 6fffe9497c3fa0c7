#!/usr/bin/env bash
# Command 2: set up, build, and run the whole test suite (ctest).
# Usage: scripts/run-tests.sh [release|debug]   (debug = ASan + UBSan)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
preset="${1:-release}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$preset"
cd "$root"
ctest --preset "$preset"
