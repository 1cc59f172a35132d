#!/usr/bin/env bash
# Headless scenario runner: bash scripts/scenario.sh <id|all|list> [--param name=value ...] [--json]
# Uses the first python3 that can import torch (same choice as the kernels, via scripts/python.sh),
# falling back to Debian's /usr/bin/python3 when that lookup is unavailable.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$root/kernels${PYTHONPATH:+:$PYTHONPATH}"
python="${MGPULAB_PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch' >/dev/null 2>&1; then
      python="$candidate"; break
    fi
  done
fi
if [ -z "$python" ]; then
  exec bash "$root/scripts/python.sh" -m mgpulab_scenarios.cli "$@"
fi
exec "$python" -m mgpulab_scenarios.cli "$@"
