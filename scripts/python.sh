#!/usr/bin/env bash
# The python3 the lab's kernels use (the first one that can import torch), for the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python=$(npx tsx -e 'import { chooseInterpreter } from "./server/kernel/python-interpreter"; process.stdout.write(chooseInterpreter().executable)')
exec "$python" "$@"
