#!/usr/bin/env bash
# Append Block beside Put Block (issue 46): TOTAL MiB in BLOCK MiB blocks, one block at a time,
# by the Python SDK, on a data folder (Benchmarks/python/append_blocks.py). adlfs measured
# 21 MiB/s for 256 MiB of 4 MiB appends when every append copied the blob.
#
#   swift build -c release --product azseed && Benchmarks/append.sh [TOTAL_MIB] [BLOCK_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
total=${1:-256}
block=${2:-4}
echo "append: $total MiB in $block MiB blocks, Append Block beside Put Block ($(nproc) cores, data on disk, $bin)"
start appends
"$py" Benchmarks/python/append_blocks.py "$(cs appends)" "$total" "$block"
