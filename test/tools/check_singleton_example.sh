#!/usr/bin/env bash
# The guide's "Run it on one machine" (docs/guides/singleton-with-lease.md),
# as a test: two example-singleton-with-lease processes on loopback with a
# file lease; the one running the job scheduler gets SIGTERM, leaves the
# cluster and hands over; the other starts the scheduler with a greater
# fencing token, well before failure detection and the lease ttl could have
# done it; both exit 0.
# Usage: check_singleton_example.sh EXAMPLE_BINARY
set -u
bin=${1:?usage: check_singleton_example.sh EXAMPLE_BINARY}
NAME=check_singleton_example
# shellcheck source=example_test_lib.sh
source "$(dirname "$0")/example_test_lib.sh"
"$bin" --cluster.port="$p1" --management.port=0 >"$dir/1.out" 2>&1 &
pids+=($!)
sleep 0.5
"$bin" --cluster.port="$p2" --management.port=0 >"$dir/2.out" 2>&1 &
pids+=($!)

# wait (at most 30 s) until one of them runs the scheduler
holder=
for _ in $(seq 300); do
  for k in 1 2; do
    grep -q "job scheduler 1 started under fencing token 1" "$dir/$k.out" && holder=$k
  done
  [ -n "$holder" ] && break
  sleep 0.1
done
[ -n "$holder" ] || fail "no node started the job scheduler within 30 s"
other=$((3 - holder))
# and both are up: the holder's log shows the other one moved up too
up=
for _ in $(seq 300); do
  [ "$(grep -c "joining -> up" "$dir/$holder.out")" -ge 2 ] && up=1 && break
  sleep 0.1
done
[ -n "$up" ] || fail "the second node did not come up within 30 s"

start=$(date +%s%N)
stop_gracefully "${pids[$((holder - 1))]}" "the stopped node"
# the hand-over: the other node runs the scheduler with token 2, long before
# detection + stable_after (20 s) or the ttl (30 s) could have made it so
took=
for _ in $(seq 150); do
  if grep -q "job scheduler 1 started under fencing token 2" "$dir/$other.out"; then
    took=$(( ($(date +%s%N) - start) / 1000000 ))
    break
  fi
  sleep 0.1
done
[ -n "$took" ] || fail "no hand-over within 15 s of SIGTERM"
grep -q "handed over to" "$dir/$holder.out" || fail "the stopped node did not hand over"
stop_gracefully "${pids[$((other - 1))]}" "the last node"
pids=()
echo "check_singleton_example: node $holder handed over to node $other in ${took} ms after SIGTERM"
