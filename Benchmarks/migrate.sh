#!/usr/bin/env bash
# `azseed migrate apply` (release build): a rename of one property across N entities in 50
# partitions, on an in-memory emulator on this machine, for each N; wall time, peak RSS of the
# azseed process and entities/s end to end (lock, ledger, reads and conditional batch writes).
# Then the same for a non-idempotent step (replace-in-property), which records each batch as
# pending before it is written; then `migrate undo 1`, which puts both back. Both migrations can be
# undone, so apply first counts (one read of the table) what undo could not tell apart. The
# entities are seeded first with `azseed apply`. First, the
# same rename by a hand-written script on the official Python SDK (Benchmarks/python/migrate_port.py).
#
#   swift build -c release --product azseed && Benchmarks/migrate.sh [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
sizes=("${@:-100000 1000000}"); sizes=(${sizes[@]})
partitions=50

seed() {  # seed N: the dataset and V1 (lib.sh), then V2, a text replacement
  rename_dataset "$work/seed$1" "$1" "$partitions"
  printf 'description: x becomes xy\noperations:\n  - replace-in-property: {table: events, name: Venue, find: x, replace: xy}\n' >"$work/seed$1/migrations/V2__replace.yaml"
}

echo "migrate apply, $(nproc) cores, $partitions partitions"
# Side by side in one run: the hand-written SDK migration of the same rename (100,000 entities).
seed 100000
start port --in-memory
"$bin" apply --dataset "$work/seed100000" --connection-string "$(cs port)" --now 2026-11-21 --concurrency 16 >/dev/null 2>&1
measure "SDK script (Python, 8 threads), 100000 entities" 100000 entities "$py" Benchmarks/python/migrate_port.py --connection-string "$(cs port)"
kill %% 2>/dev/null || true
for n in "${sizes[@]}"; do
  seed "$n"
  start "m$n" --in-memory
  "$bin" apply --dataset "$work/seed$n" --connection-string "$(cs "m$n")" --now 2026-11-21 --concurrency 16 >/dev/null 2>&1
  measure "rename-property, $n entities" "$n" entities "$bin" migrate apply --to 1 --dataset "$work/seed$n" --connection-string "$(cs "m$n")"
  measure "replace-in-property, $n entities" "$n" entities "$bin" migrate apply --to 2 --dataset "$work/seed$n" --connection-string "$(cs "m$n")"
  measure "undo of both, $n entities" "$n" entities "$bin" migrate undo 1 --dataset "$work/seed$n" --connection-string "$(cs "m$n")"
  "$bin" migrate status --dataset "$work/seed$n" --connection-string "$(cs "m$n")" --output json | grep -c '"undone"' | sed 's/^/undone migrations: /'
  kill %% 2>/dev/null || true
done
