#!/usr/bin/env bash
# Sharded apply (release build): EVENTS SpeakEasy events applied by 1 process, then by N
# processes with --shard I/N against one emulator (one account), then by N processes each
# against an emulator of its own (N accounts, so the server is not shared). Wall time of the
# whole group, its peak RSS (the largest process), and entities/s.
#
#   swift build -c release --product azseed && Benchmarks/shards.sh [EVENTS] [N...]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
events=${1:-100000}; shift || true
counts=("${@:-2 4}"); counts=(${counts[@]})
now=(--now 2026-11-21 --events "$events")
total=$((events + 8))

group() {  # group N TARGETS...: N apply processes, shard i to TARGETS[i % len]
  local n=$1; shift; local targets=("$@") pids=()
  for ((i = 0; i < n; i++)); do
    local shard=(); [ "$n" -gt 1 ] && shard=(--shard "$i/$n")
    "$bin" apply --connection-string "$(cs "${targets[$((i % ${#targets[@]}))]}")" "${now[@]}" "${shard[@]}" >"$work/apply$i.out" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/apply*.out >&2; exit 1; }; done
}
export -f group cs
echo "sharded apply of $total entities ($(nproc) cores)"
start one --in-memory
measure "1 process, 1 emulator" "$total" entities bash -c "$(declare -f group cs); bin=$bin work=$work key=$key now=(${now[*]}); group 1 one"
for n in "${counts[@]}"; do
  start "shared$n" --in-memory
  measure "$n processes, 1 emulator" "$total" entities bash -c "$(declare -f group cs); bin=$bin work=$work key=$key now=(${now[*]}); group $n shared$n"
  names=(); for ((i = 0; i < n; i++)); do start "own$n-$i" --in-memory; names+=("own$n-$i"); done
  measure "$n processes, $n emulators" "$total" entities bash -c "$(declare -f group cs); bin=$bin work=$work key=$key now=(${now[*]}); group $n ${names[*]}"
done
# The shared emulator holds exactly what one process wrote.
"$bin" verify --connection-string "$(cs "shared${counts[-1]}")" "${now[@]}" >/dev/null && echo "verify after ${counts[-1]} shards: exit 0"
