#!/usr/bin/env bash
# docs/guides/writing-a-cluster-app.md's "Two nodes on one machine", as a
# test: two example-cluster-app processes on loopback (file leases, the
# management API on a free port each: --management.port=0) form a cluster
# (both log "joining -> up"), one runs the view-generator singleton and the
# page counters count its views; SIGTERM to the generator's
# node hands the singleton over under a greater fencing token, and both
# exit 0.
# Usage: check_cluster_app.sh EXAMPLE_BINARY
set -u
bin=${1:?usage: check_cluster_app.sh EXAMPLE_BINARY}
NAME=check_cluster_app
# shellcheck source=../tools/example_test_lib.sh
source "$(dirname "$0")/../tools/example_test_lib.sh"

"$bin" --cluster.port="$p1" --management.port=0 >"$dir/1.out" 2>&1 &
pids+=($!)
sleep 0.5
"$bin" --cluster.port="$p2" --management.port=0 >"$dir/2.out" 2>&1 &
pids+=($!)

for i in 0 1; do
  sleep 0.2
  if ! kill -0 "${pids[$i]}" 2>/dev/null; then
    fail "node $((i + 1)) exited at start"
  fi
done

count() { cat "$dir/1.out" "$dir/2.out" | grep -c "$1"; }
wait_for() { # PATTERN N SECONDS
  for _ in $(seq $(($3 * 10))); do
    [ "$(count "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

wait_for "joining -> up" 2 30 || fail "the two nodes did not come up within 30 s"
wait_for "view generator 1 started under fencing token" 1 30 \
  || fail "no view generator started within 30 s"
wait_for " views (token " 5 30 || fail "fewer than 5 views counted within 30 s"
holder=1
grep -q "view generator 1 started" "$dir/2.out" && holder=2
other=$((3 - holder))
token=$(grep -o "view generator 1 started under fencing token [0-9]*" "$dir/$holder.out" | awk '{print $NF}')
grep -q "refused a view" "$dir/1.out" "$dir/2.out" && fail "a counter refused a view of the only generator"

stop_gracefully "${pids[$((holder - 1))]}" "the generator's node"
new=
for _ in $(seq 300); do
  new=$(grep -o "view generator [0-9]* started under fencing token [0-9]*" "$dir/$other.out" | awk '{print $NF}' | tail -1)
  [ -n "$new" ] && break
  sleep 0.1
done
[ -n "$new" ] || fail "the view generator did not start on node $other within 30 s of SIGTERM"
[ "$new" -gt "$token" ] || fail "the new fencing token $new is not greater than $token"
before=$(grep -c " views (token $new," "$dir/$other.out")
sleep 3
[ "$(grep -c " views (token $new," "$dir/$other.out")" -gt "$before" ] \
  || fail "node $other counts no views under token $new"

stop_gracefully "${pids[$((other - 1))]}" "the last node"
pids=()
echo "check_cluster_app: the view generator ran on node $holder under token $token, then on node $other under token $new"
