#!/usr/bin/env bash
# Starts the lab on this machine's defaults: http://127.0.0.1:3000, local kernels.
# HOST, PORT and MGPULAB_PYTHON override the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_debian_packages python3 python3-torch python3-ipython python3-matplotlib python3-tqdm python3-jedi
ensure_node_modules
ensure_next_build
say "starting on http://${HOST:-127.0.0.1}:${PORT:-3000}"
NODE_ENV=production exec npx tsx server/main.ts
