#!/usr/bin/env bash
# Seeding and snapshot rates (release build). Usage: Benchmarks/snapshots.sh [events]
# Starts two emulators on disk, applies the SpeakEasy dataset with N events (default
# 100,000) to the first, exports it, imports the snapshot into the second, and re-plans the
# import (a dry run against an account that already holds everything), each timed with
# peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
swift build -c release --product azseed >/dev/null
bin=.build/release/azseed
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

start() {  # start DIR -> prints the connection string
  "$bin" emulator --blob-port 0 --table-port 0 --data-dir "$1" >"$1.out" 2>&1 &
  for _ in $(seq 100); do grep -q 'table:' "$1.out" 2>/dev/null && break; sleep 0.1; done
  blob=$(awk '/blob:/ {print $2}' "$1.out"); table=$(awk '/table:/ {print $2}' "$1.out")
  echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=$blob;TableEndpoint=$table"
}
timed() { /usr/bin/time -f "  wall %e s, peak RSS %M KB" "$@"; }

a=$(start "$work/a"); b=$(start "$work/b")
window=(--now 2026-11-21 --from 2026-01-01 --to 2027-01-01)
echo "== apply $n events to an empty account"
timed "$bin" apply --connection-string "$a" --events "$n" "${window[@]}" | tail -1
echo "== plan against the account now holding them"
timed "$bin" plan --connection-string "$a" --events "$n" "${window[@]}" | tail -1
echo "== export"
timed "$bin" export --connection-string "$a" --out "$work/snap"
echo "== import into a second, empty account"
timed "$bin" import "$work/snap" --connection-string "$b" | tail -1
echo "== import again (dry run, no changes)"
timed "$bin" import "$work/snap" --connection-string "$b" --dry-run | tail -1
