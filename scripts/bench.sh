#!/usr/bin/env bash
# Runs the benchmarks against Jupyter; installs Jupyter's Debian packages when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_debian_packages python3 python3-torch python3-ipykernel python3-jupyter-client python3-notebook
ensure_node_modules
# The kernel path: the lab's kernels (through the host agent, and on the server's own PTY) against ipykernel.
npx tsx tests/bench/run.ts "$@"
# The server's CPU per trivial cell against Jupyter Notebook's server, same run (builds the web app when stale).
npx tsx tests/bench/cell-cpu.ts
# What "durable before visible" costs a viewer (same run, interleaved).
exec npx tsx tests/bench/durability.ts
