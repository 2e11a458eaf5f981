# Shared by the benchmark scripts (sourced from the repository root after the release build):
# the binaries, a work folder removed on exit, emulators started on demand and a measuring
# helper that prints wall seconds, peak RSS and the rate.
bin=${AZSEED_BIN:-$PWD/.build/release/azseed}  # AZSEED_BIN: another build (a before/after comparison)
py=$PWD/.venv/bin/python
port=$PWD/Benchmarks/python/speakeasy_port.py
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
key="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

start() {  # start NAME [--in-memory] [emulator flags...]: a new, empty emulator (in this shell, so the trap stops it)
  local name=$1; shift
  local where=(--data-dir "$work/$name"); if [ "${1:-}" = --in-memory ]; then where=(--in-memory); shift; fi
  "$bin" emulator --blob-port 0 --table-port 0 "${where[@]}" "$@" >"$work/$name.out" 2>&1 &
  for _ in $(seq 100); do grep -q 'table:' "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
}
origin() {  # origin NAME -> scheme://host:port of emulator NAME's blob endpoint (for --allow-copy-source)
  awk '/blob:/ {print $2}' "$work/$1.out" | sed -E 's#^(https?://[^/]+).*#\1#'
}
cs() {  # cs NAME -> the connection string of emulator NAME
  echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$key;BlobEndpoint=$(awk '/blob:/ {print $2}' "$work/$1.out");TableEndpoint=$(awk '/table:/ {print $2}' "$work/$1.out")"
}
rename_dataset() {  # rename_dataset DIR N PARTITIONS: N entities (Place "x", Number) in PARTITIONS partitions of table events, and V1 renaming Place to Venue
  local dir=$1 n=$2 parts=$3
  mkdir -p "$dir/migrations"
  {
    printf 'name: bench\nseed: 1\nwindow: { from: today-7, days: 7 }\ntables:\n  - name: events\n    kinds:\n'
    for ((p = 0; p < parts; p++)); do
      printf '      - { name: k%d, partition: p%d, count: %d, key: [Number], fields: { Number: { sequence: { start: %d, step: %d }, type: Edm.Int32 }, Place: { pick: [x] } } }\n' \
        "$p" "$p" $((n / parts)) "$p" "$parts"
    done
  } >"$dir/dataset.yaml"
  printf 'description: Place becomes Venue\noperations:\n  - rename-property: {table: events, from: Place, to: Venue}\n' >"$dir/migrations/V1__rename.yaml"
}
measure() {  # measure LABEL COUNT UNIT command... -> one result line
  local label=$1 count=$2 unit=$3; shift 3
  /usr/bin/time -o "$work/time" -f "%e %M" "$@" >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
  read -r wall rss <"$work/time"
  printf "%-44s %8.2f s %7.0f MB %10s %s/s\n" "$label" "$wall" "$((rss / 1024))" "$(awk -v n="$count" -v s="$wall" 'BEGIN { printf "%.0f", n / s }')" "$unit"
}
