#!/usr/bin/env bash
# The plan at scale (docs/plan.md, "Scale"): lengths-only datasets of 10 M, 100 M and 200 M
# documents (override with arguments), planned as rank 517 of 1,024 (seq 4096, batch 8).
# For concat, bestfit, pad and a 3-way bestfit mixture: time to the first batch, private and shared
# memory, the epoch's step count cold and from the cache; then 8 ranks started together. With
# MEGATRON=1 the same for the .idx, every run a first open (no cached totals), its 8 ranks too.
# Prints JSON lines; deletes what it wrote. Needs ~4.2 bytes of disk per document (20 with
# MEGATRON=1, which also plans a Megatron .idx of the same lengths with a sparse .bin).
# Each Megatron run also times `stoker plan --steps 1` on a first open (no cache) per mode.
# COUNT=0 skips the epoch counts (bestfit's cold count is minutes at 200 M), NODE=0 the 8 ranks.
# Usage: bench/plan_scale.sh [DOCS...]   (BUILD=build, PLAN_SCALE_DIR=/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}/bench/plan_scale_benchmark
STOKER=${BUILD:-build}/stoker
count=--count
[ "${COUNT:-1}" = 0 ] && count=
dir=$(mktemp -d "${PLAN_SCALE_DIR:-/tmp}/plan-scale.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export STOKER_CACHE_DIR=$dir/cache
sizes=("$@")
((${#sizes[@]})) || sizes=(10000000 100000000 200000000)
for n in "${sizes[@]}"; do
  "$B" make "$dir" "$n" ${MEGATRON:+--megatron}
  idx=$dir/lengths-$n.stkidx
  inputs=("$idx")
  [ -n "${MEGATRON:-}" ] && inputs+=("$dir/megatron-$n")
  for input in "${inputs[@]}"; do
    # Every run over a Megatron input is a first open (no cached totals).
    for pack in concat bestfit pad; do
      rm -f "$STOKER_CACHE_DIR"/plan/megatron-*
      echo "{\"input\": \"$(basename "$input")\"}"
      "$B" run --pack "$pack" $count "$input"
    done
    rm -f "$STOKER_CACHE_DIR"/plan/megatron-*
    echo "{\"input\": \"mixture of 3 $(basename "$input")\"}"
    "$B" run --pack bestfit $count "$input" "$input" "$input"
  done
  if [ -n "${MEGATRON:-}" ]; then
    for pack in concat bestfit pad; do
      rm -f "$STOKER_CACHE_DIR"/plan/megatron-*
      start=$(date +%s.%N)
      "$STOKER" plan "$dir/megatron-$n" --steps 1 --seq-len 4096 --batch-size 8 --world-size 1024 \
        --rank 517 --pack "$pack" >/dev/null
      end=$(date +%s.%N)
      echo "{\"cli\": \"stoker plan --steps 1\", \"first_open\": true, \"pack\": \"$pack\", \"docs\": $n, \"wall_s\": $(printf %.3f "$(echo "$end - $start" | bc)")}"
    done
  fi
  [ "${NODE:-1}" = 0 ] && { rm -f "$dir"/lengths-* "$dir"/megatron-*; continue; }
  for input in "${inputs[@]}"; do
    for pack in concat bestfit; do
      rm -f "$STOKER_CACHE_DIR"/plan/megatron-*  # 8 ranks of a first run: all of them cold
      start=$(date +%s.%N)
      for r in 0 1 2 3 4 5 6 7; do
        "$B" run --pack "$pack" --rank "$r" "$input" >"$dir/rank$r" &
      done
      wait
      end=$(date +%s.%N)
      python3 - "$pack" "$n" "$start" "$end" "$(basename "$input")" "$dir"/rank? <<'PY'
import json, sys
pack, n, start, end, name = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
runs = [json.loads(open(f).read()) for f in sys.argv[6:]]
print(json.dumps({"node_of_8": pack, "input": name, "docs": n, "wall_s": round(end - start, 3),
                  "total_rss_anon_mb": round(sum(r["rss_anon_mb"] for r in runs), 1),
                  "max_first_batch_s": max(r["first_batch_s"] for r in runs),
                  "rss_file_mb_each": max(r["rss_file_mb"] for r in runs)}))
PY
    done
  done
  rm -f "$dir"/lengths-* "$dir"/megatron-*
done
