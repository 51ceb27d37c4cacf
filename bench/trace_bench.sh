#!/usr/bin/env bash
# `stoker trace` at the scale of a 7B run (docs/lineage.md; issue 47): STEPS steps (default
# 20,000) of 4 M tokens each (seq 4096 x batch 8 x 128 ranks = 4,194,304 tokens) to Parquet, over a
# Megatron dataset whose lengths are known without data (plan_scale_benchmark make: DOCS
# log-normal lengths, mean 820 tokens, an .idx and a sparse .bin; 10 M documents = 8.2 B tokens,
# so the trace crosses ~10 epochs). Prints the wall time, peak memory (/usr/bin/time -v), the
# pieces and the file size, then reads the file back with pyarrow (row count, one step's rows).
# Deletes what it wrote. Usage: bench/trace_bench.sh [STEPS] [DOCS]  (BUILD=build, TRACE_DIR=/tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20000}
docs=${2:-10000000}
B=${BUILD:-build}
dir=$(mktemp -d "${TRACE_DIR:-/tmp}/trace-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export STOKER_CACHE_DIR=$dir/cache
"$B/bench/plan_scale_benchmark" make "$dir" "$docs" --megatron >/dev/null
out=$dir/trace.parquet
/usr/bin/time -v "$B/stoker" trace "$dir/megatron-$docs" --seq-len 4096 --batch-size 8 \
  --world-size 128 --steps "0..$((steps - 1))" -o "$out" 2>"$dir/time" >/dev/null
grep -E "stoker trace: steps|Elapsed|Maximum resident|User time|System time" "$dir/time"
python=${PYTHON:-.venv/bin/python}
"$python" - "$out" "$steps" <<'PY'
import sys
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
rows, steps = f.metadata.num_rows, int(sys.argv[2])
print(f"rows {rows:,} ({rows / steps:,.0f} pieces per step), row groups {f.num_row_groups}, "
      f"{f.metadata.serialized_size:,} footer bytes")
t = f.read_row_group(0, columns=["step", "rank", "length"]).to_pydict()
first = [l for s, l in zip(t["step"], t["length"]) if s == 0]
print(f"step 0: {len(first)} pieces, {sum(first):,} tokens (4,194,304 expected)")
PY
ls -l "$out" | awk '{printf "parquet bytes %\047d\n", $5}'
