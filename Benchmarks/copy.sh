#!/usr/bin/env bash
# Account-to-account copy (release build): SpeakEasy with EVENTS events seeded into one emulator,
# then copied into empty emulators three ways, side by side in one run — `azseed copy` (blobs
# server-side), `azseed export` + `azseed import` (through a snapshot on disk), and the official
# SDKs' straightforward copy (Benchmarks/python/copy_port.py, 8 threads) — then `azseed copy`
# again onto the copied account (nothing to do). Each target's export is compared byte for byte
# with the source's; the blob bytes that went through azseed are its own count.
#
#   swift build -c release --product azseed && Benchmarks/copy.sh [EVENTS]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
events=${1:-100000}
total=$((events + 8))
echo "copy of SpeakEasy with $total entities and 8 photos between two emulators ($(nproc) cores)"
start source --in-memory
"$bin" apply --connection-string "$(cs source)" --now 2026-11-21 --events "$events" >/dev/null 2>&1
# The targets may read copy sources from the source emulator (an emulator reads no remote
# source unless its origin is allowed), so blobs go account to account as they would in Azure.
start copy --in-memory --allow-copy-source "$(origin source)"; start snap --in-memory; start sdk --in-memory
measure "azseed copy" "$total" entities "$bin" copy --from "$(cs source)" --to "$(cs copy)"
grep '^Blob bytes' "$work/stdout"
measure "azseed export + import (snapshot on disk)" "$total" entities bash -c \
  "'$bin' export --connection-string '$(cs source)' --out '$work/snapshot' && '$bin' import '$work/snapshot' --connection-string '$(cs snap)'"
measure "Python SDK copy (8 threads)" "$total" entities "$py" Benchmarks/python/copy_port.py --from "$(cs source)" --to "$(cs sdk)"
measure "azseed copy again (no changes)" "$total" entities "$bin" copy --from "$(cs source)" --to "$(cs copy)"
grep -q 'No changes' "$work/stdout" && echo "second copy: no changes"
"$bin" export --connection-string "$(cs source)" --out "$work/e-source" >/dev/null 2>&1
for target in copy snap sdk; do
  "$bin" export --connection-string "$(cs $target)" --out "$work/e-$target" >/dev/null 2>&1
  if diff -rq -x manifest.json "$work/e-source" "$work/e-$target" >/dev/null; then echo "$target: export byte-identical to the source's"; else echo "$target: export DIFFERS"; fi
done
