# Reads a test runner's closing lines into "passed failed" (two numbers on one line), for scripts/test.sh.
# A test that did not pass counts as failed however its runner names it: node --test's "fail" and
# "cancelled" (a test that timed out, and the tests of its suite after it, are cancelled, not failed),
# pytest's "failed" and "error".
#   source scripts/test-counts.sh; count_node_log FILE; count_pytest_log FILE

count_node_log() {
  local p f c
  p=$(grep -E '^ℹ pass [0-9]+' "$1" | tail -1 | awk '{print $3}')
  f=$(grep -E '^ℹ fail [0-9]+' "$1" | tail -1 | awk '{print $3}')
  c=$(grep -E '^ℹ cancelled [0-9]+' "$1" | tail -1 | awk '{print $3}')
  echo "${p:-0} $(( ${f:-0} + ${c:-0} ))"
}

count_pytest_log() {
  local line p f e
  line=$(grep -E '[0-9]+ (passed|failed|errors?)' "$1" | tail -1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | awk '{print $1}')
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | awk '{print $1}')
  e=$(grep -oE '[0-9]+ errors?' <<<"$line" | awk '{print $1}')
  echo "${p:-0} $(( ${f:-0} + ${e:-0} ))"
}
