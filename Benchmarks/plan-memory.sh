#!/usr/bin/env bash
# azseed plan over an account that already holds the dataset: wall time and peak RSS for a
# small and a large number of events (issue 15: < 1.5 s at 100,000; peak at 1,000,000 within
# 1.3x of the peak at 100,000). Release build; each size seeded into a fresh emulator on disk.
#
#   Benchmarks/plan-memory.sh [small] [large]     (defaults: 100000 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."
small="${1:-100000}"
large="${2:-1000000}"
swift build -c release --product azseed >/dev/null 2>&1
source Benchmarks/lib.sh
window=(--now 2026-11-21 --from 2026-01-01 --to 2027-01-01)

for events in "$small" "$large"; do
  echo "== $events events"
  start "e$events"
  measure "azseed apply (seeding)" "$((events + 8))" entities "$bin" apply --connection-string "$(cs "e$events")" --events "$events" "${window[@]}"
  measure "plan against $events existing entities" "$((events + 8))" entities "$bin" plan --connection-string "$(cs "e$events")" --events "$events" "${window[@]}"
  cp "$work/time" "$work/plan-$events"
  measure "plan --output json (digests)" "$((events + 8))" entities "$bin" plan --connection-string "$(cs "e$events")" --events "$events" "${window[@]}" --output json
  measure "generate --events $events (no storage)" "$((events + 8))" entities "$bin" generate --out "$work/g$events" --events "$events" "${window[@]}"
  rm -rf "$work/g$events"
  kill %% 2>/dev/null || true
done
read -r _ small_rss <"$work/plan-$small"
read -r _ large_rss <"$work/plan-$large"
awk -v a="$small_rss" -v b="$large_rss" 'BEGIN { printf "peak RSS of plan at the large size / at the small size: %.2f\n", b / a }'
