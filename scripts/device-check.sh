#!/usr/bin/env bash
# The checks for a lent GPU machine (python3 + torch, no node, no network): the
# Python suite with its `cuda` tests, then every scenario of the catalog run
# headless as a participant would. Each part is bounded; results go to $OUT
# (or a temporary folder), a summary to stdout.
#   bash scripts/device-check.sh            # PYTEST_SECONDS / CATALOG_SECONDS bound each part
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
export PYTHONDONTWRITEBYTECODE=1
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; } > "$out/gpus.txt" 2>&1
python3 -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())' > "$out/env.txt" 2>&1
cat "$out/env.txt" "$out/gpus.txt"
start=$(date +%s)
(cd kernels && timeout "${PYTEST_SECONDS:-240}" python3 -m pytest -q -rs -p no:cacheprovider --durations=15 tests) > "$out/pytest.txt" 2>&1
echo "pytest: rc=$? in $(( $(date +%s) - start )) s"
grep -E "passed|failed|error" "$out/pytest.txt" | tail -3
grep -E "^(FAILED|ERROR|SKIPPED)" "$out/pytest.txt" | head -30
start=$(date +%s)
timeout "${CATALOG_SECONDS:-240}" bash scripts/scenario.sh all > "$out/catalog.txt" 2> "$out/catalog.err"
echo "catalog: rc=$? in $(( $(date +%s) - start )) s"
tail -3 "$out/catalog.txt"; tail -5 "$out/catalog.err"
