#!/usr/bin/env bash
# The guide's "Run it on one machine" (docs/guides/sharding-with-lease.md),
# as a test: two example-sharding-with-lease processes on loopback with a
# file lease for the coordinator; deposits typed into the second reach
# accounts on both; the first gets SIGTERM, hands its shards off and leaves;
# a deposit to one of its accounts then prints on the second (a new
# incarnation: the balance starts from zero), long before failure detection
# and the removal margin could have moved it; a third node with another
# sharding.number_of_shards is refused at join and exits 1; the two exit 0.
# Usage: check_sharding_example.sh EXAMPLE_BINARY
set -u
bin=${1:?usage: check_sharding_example.sh EXAMPLE_BINARY}
NAME=check_sharding_example
# shellcheck source=example_test_lib.sh
source "$(dirname "$0")/example_test_lib.sh"
mkfifo "$dir/in"
exec 3<>"$dir/in"
"$bin" --cluster.port="$p1" --management.port=0 </dev/null >"$dir/1.out" 2>&1 &
pids+=($!)
sleep 0.5
"$bin" --cluster.port="$p2" --management.port=0 <"$dir/in" >"$dir/2.out" 2>&1 &
pids+=($!)

up=
for _ in $(seq 300); do
  [ "$(grep -c "joining -> up" "$dir/1.out" "$dir/2.out" | awk -F: '{s+=$2} END {print s}')" -ge 2 ] && up=1 && break
  sleep 0.1
done
[ -n "$up" ] || fail "the two nodes did not come up within 30 s"

for i in $(seq 1 20); do echo "acc-$i 100" >&3; done
done_=
for _ in $(seq 300); do
  [ "$(cat "$dir/1.out" "$dir/2.out" | grep -c "balance 100$")" -ge 20 ] && done_=1 && break
  sleep 0.1
done
[ -n "$done_" ] || fail "not every deposit printed a balance within 30 s"
on1=$(grep -o "account acc-[0-9]* " "$dir/1.out" | head -1 | awk '{print $2}')
[ -n "$on1" ] || fail "no account lives on the first node"
grep -q "account .* balance 100$" "$dir/2.out" || fail "no account lives on the second node"

start=$(date +%s%N)
stop_gracefully "${pids[0]}" "the stopped node"
grep -q "graceful shutdown" "$dir/1.out" || fail "the stopped node did not hand its shards off"
echo "$on1 7" >&3
took=
for _ in $(seq 150); do
  if grep -q "account $on1 .* balance 7$" "$dir/2.out"; then
    took=$(( ($(date +%s%N) - start) / 1000000 ))
    break
  fi
  sleep 0.1
done
[ -n "$took" ] || fail "the deposit to $on1 did not reach the second node within 15 s of SIGTERM"

# A node with another sharding.number_of_shards is refused at join: the
# error names the key and both values, and the node exits 1 (a supervisor
# must see a failure, not a clean exit).
p3=$(free_port)
"$bin" --cluster.port="$p3" --management.port=0 --sharding.number_of_shards=500 </dev/null >"$dir/3.out" 2>&1 &
refused=$!
pids+=("$refused")
for _ in $(seq 300); do kill -0 "$refused" 2>/dev/null || break; sleep 0.1; done
kill -0 "$refused" 2>/dev/null && fail "the node with 500 shards still runs 30 s after it started"
wait "$refused"
rc=$?
[ $rc -eq 1 ] || fail "the refused node exited with $rc, not 1"
grep -q 'sharding.number_of_shards is "1000" on the seed node but "500" on this node' "$dir/3.out" \
  || fail "the refused node did not name the mismatched key and values"

stop_gracefully "${pids[1]}" "the last node"
pids=()
echo "check_sharding_example: $on1 moved from node 1 to node 2 and took a deposit ${took} ms after SIGTERM"
