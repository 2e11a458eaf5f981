#!/usr/bin/env bash
# Generation benchmarks (release build). Usage: Benchmarks/run.sh
# Prints the rate of making entities in memory, of making + encoding them as snapshot JSON,
# and of a whole `azseed generate` run to disk, with peak memory for each.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product azseed >/dev/null
swift build -c release --product generate-benchmark >/dev/null
for n in 100000 1000000; do
  echo "== $n events, in memory"
  .build/release/generate-benchmark "$n"
done
out=$(mktemp -d)
echo "== azseed generate --events 1000000 (to $out)"
/usr/bin/time -f "wall %e s, user %U s, sys %S s, peak RSS %M KB" \
  .build/release/azseed generate --out "$out/fx" --events 1000000 --from 2026-01-01 --to 2027-01-01 --seed 42
du -sh "$out/fx/tables"
rm -rf "$out"

# Emulator ingest (release): 100,000 SpeakEasy-shaped events in batches of 100, 500 blobs of
# 64 KiB, then the partition read back; on disk, in memory, and in-process without HTTP.
swift build -c release --product emulator-benchmark >/dev/null
.build/release/emulator-benchmark 100000 500 8

# Seeding, export and import through the azseed command against emulators on disk.
Benchmarks/snapshots.sh 100000

# A 1 GiB blob through BlobClient (upload from a file, download to a file) beside curl,
# against an emulator on disk: rates and peak memory.
swift build -c release --product blob-transfer-benchmark >/dev/null
.build/release/blob-transfer-benchmark 1024
