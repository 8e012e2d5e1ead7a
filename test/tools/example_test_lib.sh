# Shared by the guides' example tests (check_*_example.sh): a scratch
# directory removed at exit, processes killed at exit, a failure that prints
# every node's log tail, a free loopback port, the environment of a
# two-node cluster on loopback with a file lease, and a graceful stop.
# Usage (after `set -u`): NAME=<test name>; source example_test_lib.sh
dir=$(mktemp -d /tmp/troupe-example-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "$NAME: $*"
  for f in "$dir"/*.out; do echo "---- $f"; tail -40 "$f"; done
  exit 1
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
p1=$(free_port); p2=$(free_port)
export TROUPE_CLUSTER__SECRET=example-test-secret-0123456789abcdef
export TROUPE_CLUSTER__SEED_NODES=127.0.0.1:$p1,127.0.0.1:$p2
export TROUPE_LEASE__FILE__DIRECTORY=$dir/leases
# SIGTERM to PID, wait for it, fail unless it exited 0: a graceful stop.
stop_gracefully() { # PID WHAT
  kill -TERM "$1"
  wait "$1"
  local rc=$?
  [ $rc -eq 0 ] || fail "$2 exited with $rc"
}
