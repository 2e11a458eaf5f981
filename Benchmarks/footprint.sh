#!/usr/bin/env bash
# The emulator's footprint on disk (release build): SpeakEasy with EVENTS events applied into an
# `azseed emulator --data-dir` folder; the time of that apply (ingest) and of a verify (every
# entity read back through queries); the size of storage.sqlite (the emulator stopped, so the WAL
# is checkpointed into it) beside the entities' JSON (the export's tables/events.jsonl); then the
# folder after `azseed reset` and after `azseed emulator --compact` (when this build has it).
#
#   swift build -c release --product azseed && Benchmarks/footprint.sh [EVENTS...]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
size() { stat -c %s "$1"; }
for events in "${@:-100000}"; do
  folder="$work/data-$events"
  echo "== $events events ($(nproc) cores)"
  "$bin" emulator --blob-port 0 --table-port 0 --data-dir "$folder" >"$work/emu.out" 2>&1 &
  emulator=$!
  for _ in $(seq 100); do grep -q 'table:' "$work/emu.out" 2>/dev/null && break; sleep 0.1; done
  cs="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$(awk '/blob:/ {print $2}' "$work/emu.out");TableEndpoint=$(awk '/table:/ {print $2}' "$work/emu.out")"
  measure "apply (ingest)" "$((events + 8))" entities "$bin" apply --connection-string "$cs" --now 2026-11-21 --events "$events"
  measure "verify (query every entity)" "$((events + 8))" entities "$bin" verify --connection-string "$cs" --now 2026-11-21 --events "$events"
  "$bin" export --connection-string "$cs" --out "$work/export-$events" >/dev/null 2>&1
  json=$(size "$work/export-$events/tables/events.jsonl")
  kill "$emulator"; wait "$emulator" || true
  db=$(size "$folder/storage.sqlite")
  echo "entities' JSON $(mb "$json"), storage.sqlite $(mb "$db"): $(awk -v d="$db" -v j="$json" 'BEGIN { printf "%.2f", d / j }')x"
  "$bin" reset --data-dir "$folder" --now 2026-11-21 --events "$events" >/dev/null 2>&1
  echo "after reset: storage.sqlite $(mb "$(size "$folder/storage.sqlite")")"
  if "$bin" emulator --help | grep -q -- --compact; then
    measure "emulator --compact" 1 folders "$bin" emulator --compact --data-dir "$folder"
    echo "after --compact: storage.sqlite $(mb "$(size "$folder/storage.sqlite")")"
  fi
  rm -rf "$folder" "$work/export-$events"
done
