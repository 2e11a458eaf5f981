#!/usr/bin/env bash
# azseed beside the Python SDK port of the original program (Benchmarks/python), release
# build, each run against a fresh emulator on disk started from the same azseed binary.
#
#   Benchmarks/compare.sh [events] [photos]     (defaults: 100000 events, 1000 photos)
#
# Workloads: the SpeakEasy job with N events (azseed apply; the port sequential and with 8
# threads); N photos of about 30 KB (azseed apply of a photo dataset; the port's uploads,
# sequential and 8 threads); the embedded storage at --concurrency 1 and the default; azseed plan against the account holding the N events; a cold
# plan of the default dataset; azseed generate of 1,000,000 events. Each line: wall seconds,
# peak RSS of the measured process, and the rate.
set -euo pipefail
cd "$(dirname "$0")/.."
events="${1:-100000}"
photos="${2:-1000}"
make -s venv >/dev/null
swift build -c release --product azseed >/dev/null 2>&1
swift build -c release --product photo-fixture >/dev/null 2>&1
source Benchmarks/lib.sh
window=(--now 2026-11-21 --from 2026-01-01 --to 2027-01-01)
images=$PWD/Seeds/speakeasy/images

echo "== SpeakEasy with $events events (8 photos, 8 speakers, the events), each into an empty account"
start a1
measure "azseed apply (--concurrency 8)" "$((events + 8))" entities "$bin" apply --connection-string "$(cs a1)" --events "$events" "${window[@]}"
start p1
measure "python port, sequential" "$((events + 8))" entities "$py" "$port" --connection-string "$(cs p1)" --events "$events" --images "$images"
start p8
measure "python port, 8 threads" "$((events + 8))" entities "$py" "$port" --connection-string "$(cs p8)" --events "$events" --images "$images" --threads 8

"$PWD/.build/release/photo-fixture" "$work/photos" "$photos" >/dev/null
bytes=$(du -sb "$work/photos/images" | cut -f1)
echo "== $photos photos ($((bytes / photos / 1024)) KB each), each into an empty account"
start b1
measure "azseed apply (--concurrency 8)" "$photos" photos "$bin" apply --connection-string "$(cs b1)" --dataset "$work/photos"
start q1
measure "python port uploads, sequential" "$photos" photos "$py" "$port" --connection-string "$(cs q1)" --images "$work/photos/images" --only blobs
start q8
measure "python port uploads, 8 threads" "$photos" photos "$py" "$port" --connection-string "$(cs q8)" --images "$work/photos/images" --only blobs --threads 8
# The same against an emulator in memory: without its fsync per blob, what the clients do.
start m1 --in-memory
measure "azseed apply, emulator in memory" "$photos" photos "$bin" apply --connection-string "$(cs m1)" --dataset "$work/photos"
start m8 --in-memory
measure "python port 8 threads, emulator in memory" "$photos" photos "$py" "$port" --connection-string "$(cs m8)" --images "$work/photos/images" --only blobs --threads 8

echo "== embedded storage (what make seed runs): 5,000 events, each into a fresh folder"
measure "azseed apply --concurrency 1, embedded" 5018 entities "$bin" apply --data-dir "$work/emb1" --events 5000 "${window[@]}" --concurrency 1
measure "azseed apply (--concurrency 8), embedded" 5018 entities "$bin" apply --data-dir "$work/emb8" --events 5000 "${window[@]}"
measure "azseed apply --concurrency 1, default dataset" 116 entities "$bin" apply --data-dir "$work/embs1" "${window[@]}" --concurrency 1
measure "azseed apply (--concurrency 8), default dataset" 116 entities "$bin" apply --data-dir "$work/embs8" "${window[@]}"

echo "== plan"
measure "plan against $events existing entities" "$((events + 8))" entities "$bin" plan --connection-string "$(cs a1)" --events "$events" "${window[@]}"
start d1
seeded=$(cs d1)
"$bin" apply --connection-string "$seeded" "${window[@]}" >/dev/null 2>&1
for run in 1 2 3; do
  measure "cold plan, default dataset, seeded account ($run)" 116 entities "$bin" plan --connection-string "$seeded" "${window[@]}"
done
start e1
empty=$(cs e1)
measure "cold plan, default dataset, empty account" 116 entities "$bin" plan --connection-string "$empty" "${window[@]}"
measure "cold plan, default dataset, embedded storage" 116 entities "$bin" plan --data-dir "$work/embedded" "${window[@]}"

echo "== generate"
measure "generate --events 1000000" 1000008 entities "$bin" generate --out "$work/fx" --events 1000000 "${window[@]}"
