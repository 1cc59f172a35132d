#!/usr/bin/env bash
# The check for a lent GPU machine (python3 + torch, pytest-xdist, no node, no network), in one command
# that fits a short slot (under 8 minutes on a 16-core GPU host; a cold start takes a minute or two of it):
#   1. the Python suite in parallel (pytest-xdist), its `cuda` tests included,
#      and at the same time the whole scenario catalog, one headless process per scenario;
#   2. then, alone on the machine, the StepTimer overhead benchmark (tests/bench/timing_overhead.py --cuda);
#   3. one summary with every figure (scripts/device_summary.py), also in $OUT/summary.txt.
# pytest is stopped with SIGINT at its limit, so it still prints its failures and durations, and a test
# running over 150 s prints every thread's stack (faulthandler_timeout).
# Every part is bounded (PYTEST_SECONDS, CATALOG_SECONDS, BENCH_SECONDS). Files are written to a temporary folder;
# where $OUT is set (the device tool brings back at most 8 files from it) they are packed into $OUT/device-check.tgz
# beside $OUT/summary.txt.
# Exit status: 0 when the suite passed, every scenario ran with no experiment failed, and the benchmark ran.
#   bash scripts/device-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
export PYTHONDONTWRITEBYTECODE=1
cores=$(nproc)
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; } > "$out/gpus.txt" 2>&1
python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' > "$out/env.txt" 2>&1
echo "cores $cores" >> "$out/env.txt"

# The suite leaves cores to the catalog's ranks; without pytest-xdist it runs serially (and says so).
workers=$(( cores > 8 ? cores - 4 : (cores > 2 ? cores - 1 : 1) ))
if python3 -c 'import xdist' 2>/dev/null && [ "$workers" -gt 1 ]; then parallel=(-n "$workers"); else parallel=(); fi
echo "pytest workers: ${parallel[*]:-serial}" >> "$out/env.txt"
start=$(date +%s)
(cd kernels && timeout -s INT -k 20 "${PYTEST_SECONDS:-360}" python3 -m pytest -q -rfEs --tb=short -p no:cacheprovider --durations=15 -o faulthandler_timeout=150 "${parallel[@]}" tests > "$out/pytest.txt" 2>&1; echo "rc=$? seconds=$(( $(date +%s) - start ))" > "$out/pytest.rc") &
for id in dp-basics dp-not-starting params-not-updated incomplete-results-gil hangs; do
  (cd kernels && timeout "${CATALOG_SECONDS:-300}" python3 -m mgpulab_scenarios.cli "$id" --json > "$out/catalog-$id.json" 2> "$out/catalog-$id.err"; echo "rc=$? seconds=$(( $(date +%s) - start ))" > "$out/catalog-$id.rc") &
done
wait
start=$(date +%s)
timeout "${BENCH_SECONDS:-150}" python3 tests/bench/timing_overhead.py --cuda "${BENCH_STEPS:-200}" "${BENCH_ROUNDS:-9}" > "$out/bench.txt" 2>&1
echo "rc=$? seconds=$(( $(date +%s) - start ))" > "$out/bench.rc"
python3 scripts/device_summary.py "$out" | tee "$out/summary.txt"
status=${PIPESTATUS[0]}
if [ -n "${OUT:-}" ]; then
  cp "$out/summary.txt" "$OUT/summary.txt"
  tar czf "$OUT/device-check.tgz" -C "$out" .
else
  echo "files: $out"
fi
exit "$status"
