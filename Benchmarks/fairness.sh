#!/usr/bin/env bash
# One client's block lists beside another's small writes (release build, data on disk): four
# commits each naming one staged 1 MiB block REPEATS times, all at once, while another client
# uploads and reads 1 KiB blobs (Benchmarks/python/fairness.py). Issue 45 measured 5.2 s for
# those small round trips before commits were concatenated in steps; the goal is < 100 ms.
#
#   swift build -c release --product azseed && Benchmarks/fairness.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib.sh
repeats=${1:-300}
echo "fairness: 4 commits of $repeats x 1 MiB beside 1 KiB uploads and reads ($(nproc) cores, data on disk)"
start fair
"$py" Benchmarks/python/fairness.py "$(cs fair)" "$repeats"
