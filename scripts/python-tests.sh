#!/usr/bin/env bash
# The Python suite (kernels/tests) with the kernels' python3, in parallel when pytest-xdist is there:
# the suite is safe to run so (each test its own ports, files and processes), which the GPU check relies on
# too (scripts/device-check.sh). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
parallel=()
if bash scripts/python.sh -c 'import xdist' 2>/dev/null; then
  parallel=(-n "${PYTEST_WORKERS:-auto}")
fi
exec bash scripts/python.sh -m pytest -q "${parallel[@]}" kernels/tests "$@"
