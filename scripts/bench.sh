#!/usr/bin/env bash
# Runs the benchmark against Jupyter; installs Jupyter's Debian packages when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_debian_packages python3 python3-torch python3-ipykernel python3-jupyter-client
ensure_node_modules
npx tsx tests/bench/run.ts "$@"
# What "durable before visible" costs a viewer (same run, interleaved).
exec npx tsx tests/bench/durability.ts
