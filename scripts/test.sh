#!/usr/bin/env bash
# Runs the whole test suite: typecheck, unit, Python, integration (real PTY,
# real python3 and torch), then end-to-end in Debian's chromium.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
set -e
# openssh-server and Slurm (slurmctld, slurmd, slurm-client, munge) are the real remote hosts of the transport tests;
# PostgreSQL, Redis and nginx are the real database, socket layer and load balancer of the several-servers tests;
# IPython, matplotlib, tqdm and jedi are what the kernel's IPython habits use when a host has them;
# pytest-xdist runs the Python suite in parallel;
# the operator's kit: Prometheus scrapes /metrics (and promtool checks its names), postgresql-client's
# pg_dump/pg_restore/psql back up and restore, systemd's systemd-analyze verifies the unit, openssl makes the TLS test's certificate;
# Jupyter (ipykernel, jupyter_client, the Notebook server) is the peer the benchmarks measure against (every benchmark runs in the suite, at smoke sizes)
ensure_debian_packages python3 python3-torch python3-pytest python3-pytest-xdist python3-nbformat python3-pyflakes python3-mypy python3-ipython python3-matplotlib python3-tqdm python3-jedi chromium openssh-server openssh-client slurmctld slurmd slurm-client munge postgresql postgresql-client redis-server nginx-light prometheus systemd openssl python3-ipykernel python3-jupyter-client python3-notebook
ensure_node_modules
set +e

passed=0
failed=0
failures=()
timings=()
log=$(mktemp)

source scripts/test-counts.sh
add_counts() { # "passed failed" from a counter
  local p f
  read -r p f <<<"$("$@")"
  passed=$((passed + p)); failed=$((failed + f))
}
count_node() { add_counts count_node_log "$log"; }
count_pytest() { add_counts count_pytest_log "$log"; }
step() { # step NAME COUNTER COMMAND...
  local name=$1 counter=$2
  shift 2
  say "── $name"
  local began=$SECONDS
  "$@" 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  timings+=("$name $((SECONDS - began)) s")
  [ "$counter" != none ] && "$counter"
  if [ "$status" != 0 ]; then
    failures+=("$name")
    # a step that failed without counting a failing test still fails the run
    [ "$counter" = none ] || grep -qE '^ℹ (fail|cancelled) [1-9]|[0-9]+ failed|[0-9]+ error' "$log" || failed=$((failed + 1))
  fi
}

step "typecheck" none npx tsc --noEmit -p tsconfig.json
step "lint" none npm run --silent lint
# the Python half of the kernel protocol is generated from the TypeScript one: fails when stale
step "generated kernel protocol" none npm run --silent protocol:check
# the kernel-side Python is linted (pyflakes) and type-checked (mypy, kernels/mypy.ini)
step "python lint and types" none npm run --silent check:python
step "unit tests" count_node npm run --silent test:unit
step "python tests" count_pytest npm run --silent test:python
# integration tests start the real server too, so the web build comes first
step "web build" none ensure_next_build
# two at a time where the files share nothing, then alone the ones that load every core or share the Slurm node
step "integration tests, two at a time" count_node bash scripts/integration-tests.sh --part parallel
step "integration tests, alone" count_node bash scripts/integration-tests.sh --part alone
step "end-to-end tests" count_node npm run --silent test:e2e
rm -f "$log"

echo
if [ ${#failures[@]} -gt 0 ]; then
  say "failed steps: ${failures[*]}"
  [ "$failed" -eq 0 ] && failed=${#failures[@]}
fi
say "time per step: $(IFS=';'; echo "${timings[*]}" | sed 's/;/, /g') (${SECONDS} s in all)"
echo "tests: $passed passed, $failed failed"
[ ${#failures[@]} -eq 0 ]
