#!/usr/bin/env bash
# The curves behind the README's benchmark pictures: at each size, `azseed apply` of SpeakEasy
# with N events into an empty account on disk (wall time, peak RSS), then a cold `azseed plan`
# over the N it wrote (a new process, the first after the apply), and — up to PORT_MAX events —
# the official-SDK port of the original program with 8 threads into its own empty account, side
# by side in the same run. Writes Benchmarks/curves.tsv (the measured data), then
# Benchmarks/python/charts.py draws docs/images/bench-*.svg from it and rewrites the generated
# table in Benchmarks/RESULTS.md.
#
#   Benchmarks/curves.sh [sizes...]     (default: 10000 30000 100000 300000 1000000; PORT_MAX=100000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(10000 30000 100000 300000 1000000)
port_max=${PORT_MAX:-100000}
make -s venv >/dev/null
swift build -c release --static-swift-stdlib --product azseed >/dev/null 2>&1
source Benchmarks/lib.sh
window=(--now 2026-11-21 --from 2026-01-01 --to 2027-01-01)
images=$PWD/Seeds/speakeasy/images
out=Benchmarks/curves.tsv
timed() { read -r w m <"$work/time"; echo "$w $((m / 1024))"; }

{
  echo "# $(date -u +%Y-%m-%d), $(nproc) cores, $(git rev-parse --short HEAD): entities = events + 8 speakers; seconds, MB of peak RSS"
  printf 'events\tapply_s\tapply_mb\tplan_s\tplan_mb\tport_s\n'
} >"$work/curves.tsv"
for n in "${sizes[@]}"; do
  start "a$n"
  measure "azseed apply, $n events" "$((n + 8))" entities "$bin" apply --connection-string "$(cs "a$n")" --events "$n" "${window[@]}"
  read -r apply_s apply_mb < <(timed)
  measure "azseed plan (cold), $n existing" "$((n + 8))" entities "$bin" plan --connection-string "$(cs "a$n")" --events "$n" "${window[@]}"
  read -r plan_s plan_mb < <(timed)
  kill %% 2>/dev/null || true
  port_s=-
  if [ "$n" -le "$port_max" ]; then
    start "p$n"
    measure "SDK port (Python, 8 threads), $n events" "$((n + 8))" entities "$py" "$port" --connection-string "$(cs "p$n")" --events "$n" --images "$images" --threads 8
    read -r port_s _ < <(timed)
    kill %% 2>/dev/null || true
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$apply_s" "$apply_mb" "$plan_s" "$plan_mb" "$port_s" >>"$work/curves.tsv"
  rm -rf "$work/a$n" "$work/p$n"
done
cp "$work/curves.tsv" "$out"
python3 Benchmarks/python/charts.py "$out" docs/images Benchmarks/RESULTS.md
echo "wrote $out, docs/images/bench-*.svg and the curves table in Benchmarks/RESULTS.md"
