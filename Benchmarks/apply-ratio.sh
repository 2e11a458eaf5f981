#!/usr/bin/env bash
# azseed apply beside the Python SDK port of the original program, at each size given, in one
# run (issue 34: at least 15x the sequential port and 10x its 8-thread form at 20,000 and at
# 100,000 events). Each line a fresh emulator on disk from the same release binary; the
# ratios are of wall times measured side by side. azseed runs three times (each into its own
# fresh emulator) and its median counts: a single sub-second run on this machine varies by
# a tenth; the ports' runs are long enough to vary less.
#
#   Benchmarks/apply-ratio.sh [events...]     (default: 20000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(20000 100000)
make -s venv >/dev/null
swift build -c release --product azseed >/dev/null 2>&1
source Benchmarks/lib.sh
window=(--now 2026-11-21 --from 2026-01-01 --to 2027-01-01)
images=$PWD/Seeds/speakeasy/images
wall() { read -r w _ <"$work/time"; echo "$w"; }

for events in "${sizes[@]}"; do
  echo "== SpeakEasy with $events events, each into an empty account on disk"
  runs=()
  for run in 1 2 3; do
    start "a$events-$run"
    measure "azseed apply ($run)" "$((events + 8))" entities "$bin" apply --connection-string "$(cs "a$events-$run")" --events "$events" "${window[@]}"
    runs+=("$(wall)")
    kill %% 2>/dev/null || true
  done
  ours=$(printf "%s\n" "${runs[@]}" | sort -n | sed -n 2p)
  echo "azseed apply, median of 3: $ours s"
  start "s$events"
  measure "python port, sequential" "$((events + 8))" entities "$py" "$port" --connection-string "$(cs "s$events")" --events "$events" --images "$images"
  sequential=$(wall)
  start "t$events"
  measure "python port, 8 threads" "$((events + 8))" entities "$py" "$port" --connection-string "$(cs "t$events")" --events "$events" --images "$images" --threads 8
  threads=$(wall)
  awk -v a="$ours" -v s="$sequential" -v t="$threads" 'BEGIN { printf "ratios: %.1fx the sequential port, %.1fx the 8-thread port\n", s / a, t / a }'
done
