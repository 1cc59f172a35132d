#!/usr/bin/env bash
# Lints and type-checks the kernel-side Python (kernels/), as tsc and eslint check the TypeScript:
# pyflakes (every file, tests and scenario templates included) and mypy (kernels/mypy.ini).
# Both run under the kernels' own interpreter, so mypy reads the torch the kernels import.
# Debian: python3-pyflakes and python3-mypy (scripts/test.sh installs them when root).
set -uo pipefail
cd "$(dirname "$0")/.."
python=$(npx tsx -e 'import { chooseInterpreter } from "./server/kernel/python-interpreter"; process.stdout.write(chooseInterpreter().executable)')
missing=()
"$python" -c 'import pyflakes' 2>/dev/null || missing+=(python3-pyflakes)
"$python" -c 'import mypy' 2>/dev/null || missing+=(python3-mypy)
if [ ${#missing[@]} -gt 0 ]; then
  echo "python-check: $python cannot import ${missing[*]#python3-}: install ${missing[*]} (apt-get install ${missing[*]})" >&2
  exit 1
fi
status=0
echo "pyflakes: kernels/"
"$python" -m pyflakes kernels || status=1
echo "mypy: kernels/ (kernels/mypy.ini)"
(cd kernels && "$python" -m mypy --config-file mypy.ini --cache-dir ../.mypy_cache) || status=1
exit $status
