#!/usr/bin/env bash
# The integration suite (tests/integration) in two parts, so that it stays inside the suite's 30 minutes:
#   parallel: files that share nothing, two at a time — each starts its own lab servers, databases and daemons,
#             on free ports, in temp dirs (tests/helpers/daemons.ts);
#   alone:    one at a time, after them — the ones that keep every core busy on purpose (the interrupt stress,
#             the chaos run, every benchmark at smoke size) and the ones on this machine's one Slurm node.
# `--part parallel|alone` runs one part (scripts/test.sh counts each as its own step); no argument runs both.
# Extra arguments go to node --test.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
# The tests start the real server on the web build; a test that builds it (scripts/cluster.sh does when it is
# stale) must never rebuild it under a test running beside it, so it is made current first.
ensure_next_build
ALONE=(interrupt-stress chaos benchmarks hosts-day-two remote-hosts slurm-transport)
part=all
if [ "${1:-}" = --part ]; then part=$2; shift 2; fi

alone_files=()
parallel_files=()
for file in tests/integration/*.test.ts; do
  name=$(basename "$file" .test.ts)
  if [[ " ${ALONE[*]} " == *" $name "* ]]; then alone_files+=("$file"); else parallel_files+=("$file"); fi
done

run() { # run CONCURRENCY FILES...
  local concurrency=$1
  shift
  node --import tsx --test --test-concurrency="$concurrency" --test-reporter=spec "$@"
}

case $part in
  parallel) run 2 "$@" "${parallel_files[@]}" ;;
  alone) run 1 "$@" "${alone_files[@]}" ;;
  all)
    run 2 "$@" "${parallel_files[@]}"
    first=$?
    run 1 "$@" "${alone_files[@]}"
    second=$?
    [ "$first" = 0 ] && [ "$second" = 0 ] ;;
  *) echo "integration-tests.sh: --part is parallel or alone, not $part" >&2; exit 2 ;;
esac
