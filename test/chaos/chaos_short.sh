#!/usr/bin/env bash
# integration:chaos_short: the chaos test's fixed-seed run (docs/design/
# chaos.md): 2 minutes of faults of every kind (seed 143 draws all nine)
# against 5 real nodes and a real etcd, judged by the history checker.
# Under CI=true the run must use network namespaces (the real partitions);
# elsewhere it takes them when it can. The run's files stay in DIR for a
# post-mortem.
# Usage: chaos_short.sh TROUPE_CHAOS DIR
set -euo pipefail
chaos=$1
dir=$2
rm -rf "$dir"
network=auto
if [ "${CI:-}" = true ]; then
  network=netns
fi
exec "$chaos" --dir "$dir" --seed 143 --duration 120s --network "$network" \
  --quiet
