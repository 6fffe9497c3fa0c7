#!/usr/bin/env bash
# Fuzzes the four readers (docs/fuzzing.md): builds the `fuzz` preset
# (clang-14, libFuzzer, ASan, UBSan; only the libraries the targets need)
# and runs each target for SECONDS (default 50: all four within 4 minutes),
# seeded from the shipped files and the kept regression inputs. Exits 1 on
# a finding, naming the input kept under the work directory; add it to
# tests/fuzz/regressions/<reader>/ once fixed.
#
# Usage: scripts/fuzz-readers.sh [SECONDS] [WORK_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-50}"
work="${2:-}"
if [[ -z "${work}" ]]; then
  work="$(mktemp -d)"
  # A directory of our own goes when nothing was found in it.
  trap '[[ "${status:-1}" == 0 ]] && rm -rf "${work}"' EXIT
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
status=0
for reader in study replay results molden; do
  corpus="${work}/${reader}"
  mkdir -p "${corpus}"
  seeds=(tests/fuzz/regressions/"${reader}")
  [[ "${reader}" == study ]] && seeds+=(experiments)
  [[ "${reader}" == molden ]] && seeds+=(tests/verify/inputs/molden)
  echo "fuzz-readers: ${reader}, ${seconds} s (corpus and findings in ${work})"
  # -timeout: one input taking a minute is a finding (a hang), like a crash.
  if ! build/fuzz/tests/fuzz/fuzz_"${reader}" -max_total_time="${seconds}" -timeout=60 \
      -rss_limit_mb=4096 -artifact_prefix="${work}/${reader}-" -print_final_stats=1 \
      "${corpus}" "${seeds[@]}" >"${work}/${reader}.log" 2>&1; then
    echo "fuzz-readers: FINDING in the ${reader} reader:"
    grep -E "^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written|.*runtime error)" \
      "${work}/${reader}.log" | head -20
    status=1
  else
    grep -E "^stat::number_of_executed_units" "${work}/${reader}.log" || true
  fi
done
exit "${status}"
