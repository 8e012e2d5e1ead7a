#!/usr/bin/env bash
# troupe-chaos's command line: a bad flag is one line on stderr naming it
# and exit 2; --plan prints a schedule and exits 0 without starting
# anything. Usage: chaos_cli_test.sh CASE TROUPE_CHAOS
set -uo pipefail
case_name=$1
chaos=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_error EXPECTED_TEXT ARGS...: exit 2 and one stderr line with it.
expect_error() {
  local want=$1
  shift
  "$chaos" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -ne 2 ]; then
    echo "FAIL: exit $rc, want 2 for: $*"; head -5 "$tmp/out" "$tmp/err"; exit 1
  fi
  if ! grep -qF -- "$want" "$tmp/err"; then
    echo "FAIL: stderr lacks '$want' for: $*"; cat "$tmp/err"; exit 1
  fi
  if [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: more than one stderr line for: $*"; cat "$tmp/err"; exit 1
  fi
  echo "ok: $*: $(cat "$tmp/err")"
}

case $case_name in
  no_dir) expect_error "--dir is required" --seed 3 ;;
  bad_seed) expect_error "--seed abc: not a number or \`random\`" --dir "$tmp/r" --seed abc ;;
  short_duration) expect_error "--duration 5s: at least 10s" --dir "$tmp/r" --duration 5s ;;
  bad_duration_unit) expect_error "--duration 3h: a whole number of seconds or minutes" --dir "$tmp/r" --duration 3h ;;
  duration_over_a_day) expect_error "--duration 1441m: a whole number of seconds or minutes up to a day" --plan --duration 1441m ;;
  empty_check) expect_error "--check needs a run directory" --check '' --plan ;;
  nan_rate) expect_error "--rate: must be a number" --plan --rate nan ;;
  unknown_fault) expect_error 'unknown fault kind "partition"' --dir "$tmp/r" --faults kill,partition ;;
  too_few_nodes) expect_error "--nodes" --dir "$tmp/r" --nodes 2 ;;
  dir_not_empty)
    mkdir -p "$tmp/r" && touch "$tmp/r/x"
    expect_error "is not empty" --dir "$tmp/r" --duration 30s --bin-dir "$(dirname "$chaos")/../../apps/demo" ;;
  check_missing) 
    "$chaos" --check "$tmp/none" >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -q "is not a directory" "$tmp/out" || { echo "FAIL: exit $rc"; cat "$tmp/out"; exit 1; }
    echo "ok: --check of a missing directory: $(cat "$tmp/out")" ;;
  plan)
    # Seed 143 is chaos_short's: it draws every kind in 2 minutes.
    "$chaos" --plan --seed 143 --duration 120s >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: --plan exited $?"; cat "$tmp/err"; exit 1; }
    for kind in kill pause "partition #" asymmetric etcd_stop etcd_slow lease_delete links_slow links_fast; do
      grep -qF -- "$kind" "$tmp/out" || { echo "FAIL: --plan lacks $kind"; cat "$tmp/out"; exit 1; }
    done
    # A majority_restart: one kill of several nodes.
    grep -qE -- '^ *\+[0-9.]+s kill node-[0-9]+,node-' "$tmp/out" || { echo "FAIL: --plan lacks a majority_restart"; cat "$tmp/out"; exit 1; }
    "$chaos" --plan --seed 143 --duration 120s >"$tmp/again"
    cmp -s "$tmp/out" "$tmp/again" || { echo "FAIL: the same seed gave another schedule"; exit 1; }
    echo "ok: --plan, $(grep -c '^ *+' "$tmp/out") steps, the same twice" ;;
  *) echo "unknown case $case_name"; exit 1 ;;
esac
