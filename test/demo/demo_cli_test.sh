#!/usr/bin/env bash
# Command-line tests of troupe-demo: exit codes and messages for bad --dir
# contents, a --dir in use, bad flags and nodes that cannot start.
# Usage: demo_cli_test.sh CASE TROUPE_DEMO TROUPE_DEMO_NODE
set -uo pipefail
case_name=$1 demo=$2 node=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/troupe-demo-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL ($case_name): $*"
  echo "---- stdout"; cat "$work/out"
  echo "---- stderr"; cat "$work/err"
  exit 1
}

# Runs troupe-demo (bounded: a hang is a failure) with stdout/stderr kept.
run() {
  timeout 60 "$demo" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}

expect() { # expect RC FILE TEXT
  [[ $rc == "$1" ]] || fail "exit code $rc, expected $1"
  grep -qF -- "$3" "$work/$2" || fail "$2 lacks: $3"
}

dir=$work/run
mkdir -p "$dir"
case $case_name in
  ledger_is_a_directory)
    mkdir "$dir/ledger.txt"
    run --quiet --dir "$dir" --node-binary "$node"
    expect 2 err "troupe-demo: $dir/ledger.txt is a directory, not a regular file"
    ;;
  ledger_is_a_fifo)
    mkfifo "$dir/ledger.txt"
    run --quiet --dir "$dir" --node-binary "$node"
    expect 2 err "troupe-demo: $dir/ledger.txt is a FIFO, not a regular file"
    ;;
  node_log_is_a_directory)
    mkdir "$dir/node-2.log"
    run --quiet --dir "$dir" --node-binary "$node"
    expect 2 err "troupe-demo: $dir/node-2.log is a directory, not a regular file"
    ;;
  leases_is_a_file)
    : >"$dir/leases"
    run --quiet --dir "$dir" --node-binary "$node"
    expect 2 err "troupe-demo: $dir/leases is a regular file, not a directory"
    ;;
  dir_in_use)
    # This shell holds the lock, as another troupe-demo would.
    exec 9>"$dir/.demo.lock"
    flock -n 9 || fail "cannot take $dir/.demo.lock"
    echo "keep" >"$dir/ledger.txt"
    run --quiet --dir "$dir" --node-binary "$node" 9>&-
    expect 2 err "troupe-demo: --dir $dir is in use by another troupe-demo"
    [[ $(cat "$dir/ledger.txt") == keep ]] || fail "the other demo's ledger was touched"
    ;;
  node_binary_is_a_directory)
    run --quiet --dir "$dir" --node-binary "$work"
    expect 2 err "troupe-demo: --node-binary $work is a directory, not an executable file"
    [[ ! -e $dir/ledger.txt ]] || fail "started although the node binary is unusable"
    ;;
  default_kills_leave_no_survivor)
    run --nodes 2 --dir "$dir" --node-binary "$node"
    expect 2 err "troupe-demo: --nodes 2 leaves no survivor for the default --kills 2; use --kills 1 or more nodes"
    ;;
  nodes_not_a_number)
    run --nodes abc --dir "$work/d" --node-binary "$node"
    expect 2 err "troupe-demo: --nodes: \"abc\" is not a whole number"
    ;;
  nodes_fail_to_start)
    fake=$work/fake-node
    printf '#!/bin/sh\necho "fake-node: cannot start: no lease module" >&2\nexit 2\n' >"$fake"
    chmod +x "$fake"
    run --quiet --dir "$dir" --node-binary "$fake"
    expect 2 out "setup error: every node process exited: node-1 exited with code 2: fake-node: cannot start: no lease module"
    grep -q "FAIL" "$work/out" && fail "a setup error reported as FAIL"
    ;;
  launcher_killed_during_freeze | interrupted_during_freeze)
    # A frozen (SIGSTOPped) node must not outlive the launcher, and an
    # interruption is no failed takeover.
    "$demo" --ttl 3s --kills 0 --freeze --dir "$dir" --node-binary "$node" \
      >"$work/out" 2>"$work/err" &
    launcher=$!
    for _ in $(seq 200); do
      grep -q "with SIGSTOP" "$work/out" && break
      sleep 0.05
    done
    grep -q "with SIGSTOP" "$work/out" || fail "no node was frozen"
    sleep 0.3
    if [[ $case_name == launcher_killed_during_freeze ]]; then
      kill -KILL "$launcher"
      wait "$launcher"
    else
      kill -INT "$launcher"
      wait "$launcher"
      rc=$?
      expect 130 out "INTERRUPTED"
      grep -q "no takeover" "$work/out" && fail "a false 'no takeover' line"
    fi
    for _ in $(seq 40); do
      pgrep -f -- "--dir $dir/leases" >/dev/null || break
      sleep 0.05
    done
    if pgrep -f -- "--dir $dir/leases" >/dev/null; then
      ps -o pid,stat,args -p "$(pgrep -d, -f -- "--dir $dir/leases")"
      pkill -KILL -f -- "--dir $dir/leases"
      fail "node processes outlived the launcher"
    fi
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo "ok: $case_name"
