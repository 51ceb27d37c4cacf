#!/usr/bin/env bash
# The plan at scale (docs/plan.md, "Scale"): lengths-only datasets of 10 M, 100 M and 200 M
# documents (override with arguments), planned as rank 517 of 1,024 (seq 4096, batch 8).
# For concat, bestfit, pad and a 3-way bestfit mixture: time to the first batch, private and shared
# memory, the epoch's step count cold and from the cache; then 8 ranks started together. With
# MEGATRON=1 the same for the .idx (its first run counts the totals cold, the next ones read them
# from the cache; its 8 ranks start cold).
# Prints JSON lines; deletes what it wrote. Needs ~4.2 bytes of disk per document (20 with
# MEGATRON=1, which also plans a Megatron .idx of the same lengths with a sparse .bin).
# Usage: bench/plan_scale.sh [DOCS...]   (BUILD=build, PLAN_SCALE_DIR=/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}/bench/plan_scale_benchmark
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
    # The first run over a Megatron input counts its totals (cold); the others read the cache.
    rm -f "$STOKER_CACHE_DIR"/megatron-*
    for pack in concat bestfit pad; do
      echo "{\"input\": \"$(basename "$input")\"}"
      "$B" run --pack "$pack" --count "$input"
    done
    echo "{\"input\": \"mixture of 3 $(basename "$input")\"}"
    "$B" run --pack bestfit --count "$input" "$input" "$input"
  done
  for input in "${inputs[@]}"; do
    for pack in concat bestfit; do
      rm -f "$STOKER_CACHE_DIR"/megatron-*  # 8 ranks of a first run: all of them cold
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
