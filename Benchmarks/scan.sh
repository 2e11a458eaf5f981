#!/usr/bin/env bash
# `azseed scan` (release build) of SpeakEasy's events table at N events (one partition of N
# events, six properties: dates, picks, a reference, a template), on an in-memory emulator on
# this machine: wall time, peak RSS of the scanning process and entities/s end to end — reading,
# inferring, writing the dataset and the fidelity report (which generates the dataset again at
# the observed counts and observes it). Without --copy-values, then with it (every entity copied
# to entities/ as well). The events are seeded first with `azseed apply`.
#
#   swift build -c release --product azseed && Benchmarks/scan.sh [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
sizes=("${@:-100000 1000000}"); sizes=(${sizes[@]})

echo "scan, $(nproc) cores"
for n in "${sizes[@]}"; do
  start "s$n" --in-memory
  "$bin" apply --connection-string "$(cs "s$n")" --count "event=$n" --now 2026-11-21 --concurrency 16 >/dev/null 2>&1
  measure "scan, $n events" "$n" entities "$bin" scan --connection-string "$(cs "s$n")" --table events --container speakers --out "$work/scan$n"
  measure "scan --copy-values, $n events" "$n" entities \
    "$bin" scan --connection-string "$(cs "s$n")" --table events --container speakers --out "$work/copy$n" --copy-values
  kill %% 2>/dev/null || true
done
