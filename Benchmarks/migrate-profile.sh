#!/usr/bin/env bash
# Where a migration's time goes: a rename of N entities (50 partitions, in-memory emulator), as
# Benchmarks/migrate.sh runs it, with the CPU seconds of the client and of the emulator; with
# `perf` (Debian's linux-perf), both processes are sampled with DWARF call graphs and the
# emulator's samples are summed under the functions RESULTS.md's "Issue 49" table names.
#
#   swift build -c release --product azseed && Benchmarks/migrate-profile.sh [N] [perf]
#   (KEEP=DIR keeps the two perf.data files in DIR, for `perf report`)
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
n=${1:-100000}; partitions=50
dataset="$work/seed"
rename_dataset "$dataset" "$n" "$partitions"
start m --in-memory
emulator=$(jobs -p | tail -1)
"$bin" apply --dataset "$dataset" --connection-string "$(cs m)" --now 2026-11-21 --concurrency 16 >/dev/null 2>&1
migrate=("$bin" migrate apply --to 1 --dataset "$dataset" --connection-string "$(cs m)")
if [ "${2:-}" = perf ]; then
  perf record -q -F 199 --call-graph dwarf,16384 -p "$emulator" -o "$work/emulator.data" 2>/dev/null &
  recorder=$!
  perf record -q -F 199 --call-graph dwarf,16384 -o "$work/client.data" "${migrate[@]}" >/dev/null 2>&1
  kill -INT "$recorder"; wait "$recorder" || true; [ -n "${KEEP:-}" ] && cp "$work"/*.data "$KEEP"/
  for side in emulator client; do
    echo "$side:"
    perf script -i "$work/$side.data" -F ip,sym 2>/dev/null | awk '{ if (NF == 0) print ""; else { $1 = ""; print } }' \
      | swift demangle --simplified | python3 Benchmarks/python/perf_breakdown.py "$side"
  done
else
  cpu() { awk '{ print $14 + $15 }' "/proc/$emulator/stat"; }
  before=$(cpu)
  /usr/bin/time -o "$work/time" -f "%e %U %S" "${migrate[@]}" >/dev/null 2>&1
  after=$(cpu)
  read -r wall user system <"$work/time"
  awk -v w="$wall" -v u="$user" -v s="$system" -v e=$((after - before)) -v n="$n" 'BEGIN {
    printf "rename of %d: %.2f s wall (%.0f entities/s); CPU: client %.2f s, emulator %.2f s\n", n, w, n / w, u + s, e / 100 }'
fi
