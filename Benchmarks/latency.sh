#!/usr/bin/env bash
# A migration over a slow link: the rename of Benchmarks/migrate.sh (N entities, 50 partitions,
# in-memory emulator) reached through Benchmarks/python/latency_proxy.py, which holds each
# request DELAY_MS before passing it on (a storage account in another region). Wall time of
# `migrate apply`; with AZSEED_BIN, another build's (a before/after comparison).
#
#   swift build -c release --product azseed && Benchmarks/latency.sh [N] [DELAY_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
n=${1:-100000}; delay=${2:-20}
rename_dataset "$work/seed" "$n" 50
start m --in-memory
"$bin" apply --dataset "$work/seed" --connection-string "$(cs m)" --now 2026-11-21 --concurrency 16 >/dev/null 2>&1
table_port=$(awk '/table:/ {print $2}' "$work/m.out" | sed -E 's#.*:([0-9]+)/.*#\1#')
proxy_port=$((20000 + RANDOM % 20000))
python3 Benchmarks/python/latency_proxy.py "$proxy_port" "$table_port" "$delay" &
sleep 0.5
slow=$(cs m | sed -E "s#(TableEndpoint=http://127.0.0.1:)[0-9]+#\1$proxy_port#")
measure "rename, $n entities, $delay ms a request" "$n" entities "$bin" migrate apply --to 1 --dataset "$work/seed" --connection-string "$slow"
