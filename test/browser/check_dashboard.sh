#!/usr/bin/env bash
# The dashboard in a real browser: starts a 3-node demo (troupe-demo
# --failure none), waits for its first node's dashboard URL, and has
# dashboard_check.py (headless Chromium through chromium-driver) open it and
# wait until it shows 3 Up members, the singleton's host and the lease
# holder. The screenshot is kept as the test's artifact.
# Usage: check_dashboard.sh TROUPE_DEMO OUT_DIR
# Exit: 0 seen; 1 not seen, or the demo did not come up (its output is
# printed).
set -u
demo=${1:?usage: check_dashboard.sh TROUPE_DEMO OUT_DIR}
out=${2:?usage: check_dashboard.sh TROUPE_DEMO OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
log="$out/demo.out"
shot="$out/dashboard.png"
rm -f "$shot"

"$demo" --nodes 3 --failure none --duration 120s >"$log" 2>&1 &
pid=$!
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  kill -TERM "$pid" 2>/dev/null
  # The launcher stops its nodes and the store on SIGTERM.
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}
trap cleanup EXIT

url=""
for _ in $(seq 1 600); do
  url=$(grep -o -m1 'dashboard http://[0-9.]*:[0-9]*/' "$log" | cut -d' ' -f2)
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "check_dashboard: the demo ended before printing a dashboard URL:"
    cat "$log"
    exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "check_dashboard: no dashboard URL within 60 s; the demo printed:"
  cat "$log"
  exit 1
fi
echo "check_dashboard: opening $url"
/usr/bin/python3 "$here/dashboard_check.py" "$url" --members 3 \
  --screenshot "$shot" --timeout 60
status=$?
if [ $status -ne 0 ]; then
  echo "---- the demo's output"
  cat "$log"
fi
[ -s "$shot" ] || { echo "check_dashboard: no screenshot at $shot"; exit 1; }
exit $status
