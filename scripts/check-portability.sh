#!/usr/bin/env bash
# Portability of the nightly regression across BLAS kernels, on one machine:
# a baseline written under one OpenBLAS kernel (OPENBLAS_CORETYPE) must pass
# under the others with no code change, and planted regressions must fail
# under each. Needs a DYNAMIC_ARCH OpenBLAS (Debian's) and a release build.
# Usage: scripts/check-portability.sh [BASE_KERNEL [KERNEL ...]]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/build/release/slaterlab"
study="$root/experiments/nightly.toml"
base_kernel="${1:-SkylakeX}"
shift || true
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(Haswell Zen Sandybridge Nehalem Prescott)
plants=("strategy.precision=float")

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
baseline="$tmp/baseline.h5"
unexpected=0
summary=()

# regress KERNEL EXPECTED_EXIT LABEL [--set ...]: one run, recorded in the summary.
regress() {
  local kernel="$1" expected="$2" label="$3"
  shift 3
  OPENBLAS_CORETYPE="$kernel" "$bin" regress "$study" --baseline "$baseline" -q "$@" \
    >/dev/null 2>"$tmp/err"
  local code=$?
  local failures
  failures=$(grep -c '^REGRESSION' "$tmp/err")
  local verdict=ok
  if [ "$code" -ne "$expected" ]; then verdict=UNEXPECTED; unexpected=1; sed 's/^/    /' "$tmp/err" | head -20; fi
  summary+=("$(printf '%-12s %-34s exit %s (expected %s), %4s REGRESSION lines: %s' \
    "$kernel" "$label" "$code" "$expected" "$failures" "$verdict")")
}

if ! OPENBLAS_CORETYPE="$base_kernel" "$bin" regress "$study" --baseline "$baseline" \
     --update-baseline -q >/dev/null 2>"$tmp/err"; then
  cat "$tmp/err"
  echo "check-portability: could not write the baseline under $base_kernel" >&2
  exit 1
fi
regress "$base_kernel" 0 "same kernel"
for kernel in "${kernels[@]}"; do
  regress "$kernel" 0 "no change"
  for plant in "${plants[@]}"; do regress "$kernel" 1 "planted: $plant" --set "$plant"; done
done

echo "baseline written under OPENBLAS_CORETYPE=$base_kernel"
printf '%s\n' "${summary[@]}"
if [ "$unexpected" -ne 0 ]; then
  echo "check-portability: FAIL (an exit code differed from the expected one)"
  exit 1
fi
echo "check-portability: PASS"
