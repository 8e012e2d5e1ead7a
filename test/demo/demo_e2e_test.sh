#!/usr/bin/env bash
# The README's demo end to end: `troupe-demo --quiet --duration 4s` starts
# the store, 3 nodes and the client load, kills the singleton's host (or,
# with FAILURE=partition, cuts it off) and must print a passing verdict
# (every check PASS, both failovers measured) and exit 0.
# Usage: demo_e2e_test.sh TROUPE_DEMO DIR [FAILURE]
set -uo pipefail
demo=$1 dir=$2 failure=${3:-kill}
rm -rf "$dir"
out=$(timeout 200 "$demo" --quiet --duration 4s --failure "$failure" \
  --dir "$dir" 2>&1)
rc=$?
echo "$out"
fail() {
  echo "FAIL: $*"
  exit 1
}
[[ $rc == 0 ]] || fail "exit code $rc, expected 0"
for line in "verdict: PASS" "PASS fencing" "PASS acked deposits" "PASS sums" \
  "PASS singleton failover" "PASS shard failover" "after the $failure" \
  "failover floor: singleton" \
  "throughput:"; do
  grep -qF -- "$line" <<<"$out" || fail "the output lacks: $line"
done
grep -q "^\[" <<<"$out" && fail "--quiet printed the live view"
grep -q "^crashed:" <<<"$out" && fail "a process crashed"
grep -q "killed by signal" <<<"$out" && fail "a node was killed by a signal"

if [[ $failure == partition ]]; then
  # The victim downed itself: its log says so (a kill would leave no line).
  grep -lq "this node was downed" "$dir"/node-*.log ||
    fail "no node logged that it was downed"
  grep -q "fault injection: blackholed" "$dir"/node-*.log ||
    fail "no node logged the injected fault"
fi
echo "ok: demo end to end ($failure)"
