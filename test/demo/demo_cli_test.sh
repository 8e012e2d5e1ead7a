#!/usr/bin/env bash
# Command-line tests of troupe-demo: exit codes and messages for bad flags,
# an unusable --dir or --bin-dir, processes that cannot start, and no child
# outliving an interrupted or killed launcher.
# Usage: demo_cli_test.sh CASE TROUPE_DEMO
set -uo pipefail
case_name=$1 demo=$2
bin=$(cd "$(dirname "$demo")" && pwd)
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
  timeout 90 "$demo" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}

expect() { # expect RC FILE TEXT
  [[ $rc == "$1" ]] || fail "exit code $rc, expected $1"
  grep -qF -- "$3" "$work/$2" || fail "$2 lacks: $3"
}

# A command-line error: exit 2, exactly one line on stderr, nothing on stdout.
expect_usage_error() { # expect_usage_error LINE
  [[ $rc == 2 ]] || fail "exit code $rc, expected 2"
  [[ $(cat "$work/err") == "$1" ]] || fail "stderr is not the one line: $1"
  [[ ! -s $work/out ]] || fail "stdout is not empty"
}

# A --bin-dir with the real binaries but for `fake`, a script.
fake_bin() { # fake_bin NAME SCRIPT
  mkdir -p "$work/bin"
  for b in troupe-demo-node troupe-demo-store; do
    ln -sf "$bin/$b" "$work/bin/$b"
  done
  rm -f "$work/bin/$1"
  printf '#!/bin/sh\n%s\n' "$2" >"$work/bin/$1"
  chmod +x "$work/bin/$1"
}

# No process started with this run's --dir may be left.
no_children() {
  for _ in $(seq 100); do
    pgrep -f -- "$dir" >/dev/null || return 0
    sleep 0.1
  done
  ps -o pid,stat,args -p "$(pgrep -d, -f -- "$dir")"
  pkill -KILL -f -- "$dir"
  fail "processes outlived the launcher"
}

dir=$work/run
mkdir -p "$dir"
case $case_name in
  nodes_not_a_number)
    run --nodes abc --dir "$dir"
    expect_usage_error "troupe-demo: --nodes: \"abc\" is not a whole number; see --help"
    ;;
  nodes_out_of_range)
    run --nodes 2 --dir "$dir"
    expect_usage_error "troupe-demo: --nodes: \"2\" must be between 3 and 9; see --help"
    ;;
  bad_lease)
    run --lease zookeeper://x:1 --dir "$dir"
    expect_usage_error "troupe-demo: --lease: \"zookeeper://x:1\" is not file, etcd://HOST:PORT (a host and a port) or kubernetes; see --help"
    ;;
  bad_failure)
    run --failure flood --dir "$dir"
    expect_usage_error "troupe-demo: --failure: \"flood\" is not kill, partition or none; see --help"
    ;;
  bad_duration)
    run --duration 1s --dir "$dir"
    expect_usage_error "troupe-demo: --duration: \"1s\" must be between 3s and 1h; see --help"
    ;;
  unknown_flag)
    run --kills 2 --dir "$dir"
    expect_usage_error "troupe-demo: unexpected arguments: --kills 2; see --help"
    ;;
  missing_value)
    run --dir "$dir" --nodes
    expect_usage_error "troupe-demo: --nodes needs a value; see --help"
    ;;
  bin_dir_without_node)
    mkdir -p "$work/empty"
    run --quiet --dir "$dir" --bin-dir "$work/empty"
    expect 2 err "troupe-demo: --bin-dir $work/empty: $work/empty/troupe-demo-node: No such file or directory"
    ;;
  leases_is_a_file)
    : >"$dir/leases"
    run --quiet --dir "$dir"
    expect 2 err "troupe-demo: $dir/leases is a regular file, not a directory"
    ;;
  dir_in_use)
    # This shell holds the lock, as another troupe-demo would.
    exec 9>"$dir/.demo.lock"
    flock -n 9 || fail "cannot take $dir/.demo.lock"
    run --quiet --dir "$dir" 9>&-
    expect 2 err "troupe-demo: --dir $dir is in use by another troupe-demo"
    [[ ! -e $dir/cluster.secret ]] || fail "started although --dir is in use"
    ;;
  store_fails_to_start)
    fake_bin troupe-demo-store 'echo "store: cannot open --dir" >&2; exit 2'
    run --quiet --dir "$dir" --bin-dir "$work/bin"
    expect 2 err "troupe-demo: store exited with code 2 (see $dir/store.log): store: cannot open --dir"
    ;;
  nodes_fail_to_start)
    fake_bin troupe-demo-node 'echo "fake-node: no cluster module" >&2; exit 2'
    run --quiet --dir "$dir" --bin-dir "$work/bin"
    expect 2 out "setup error: node-1 exited with code 2 before the cluster formed"
    grep -qF "fake-node: no cluster module" "$work/out" || fail "no stderr tail"
    grep -q "FAIL" "$work/out" && fail "a setup error reported as FAIL"
    no_children
    ;;
  cluster_secret_is_private)
    fake_bin troupe-demo-node 'exit 2'
    run --quiet --dir "$dir" --bin-dir "$work/bin"
    [[ $(stat -c %a "$dir/cluster.secret") == 600 ]] \
      || fail "cluster.secret has mode $(stat -c %a "$dir/cluster.secret")"
    ;;
  launcher_killed | interrupted)
    # Interrupted under load: the client runs, the run is cut short.
    ready="started 3 nodes"
    [[ $case_name == interrupted ]] && ready="running under load"
    "$demo" --duration 30s --dir "$dir" >"$work/out" 2>"$work/err" &
    launcher=$!
    for _ in $(seq 900); do
      grep -q "$ready" "$work/out" && break
      sleep 0.1
    done
    grep -q "$ready" "$work/out" || fail "not seen: $ready"
    sleep 1
    if [[ $case_name == launcher_killed ]]; then
      kill -KILL "$launcher"
      wait "$launcher"
    else
      kill -INT "$launcher"
      wait "$launcher"
      rc=$?
      expect 130 out "interrupted (SIGINT or SIGTERM) while running under load: the run did not end, so it is not judged"
      [[ $(tail -n 1 "$work/out") == INTERRUPTED ]] || fail "INTERRUPTED is not the last line"
      grep -q "verdict" "$work/out" && fail "an interrupted run was judged"
    fi
    no_children
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo "ok: $case_name"
