#!/usr/bin/env bash
# 2-thread scaling of the `stoker pack` command, measured the way a VM whose speed drifts allows:
# ROUNDS rounds, each a --num-workers 1 pack and then a --num-workers 2 pack of the same input, each
# after the previous output was removed and synced (untimed); per round the wall times, the CPU
# time (user + sys) and the context switches (from /proc, via GNU time), and the round's own
# speed-up; at the end the median of the rounds' speed-ups and of the CPU ratio. Not a test.
#
#   bench/pack_scaling.sh INPUT.jsonl TOKENIZER [PATTERN] [ROUNDS] [STOKER]
#   e.g. bench/pack_scaling.sh corpus.jsonl .venv/lib/python3.11/site-packages/tiktoken_ext/data/cl100k_base.tiktoken cl100k 6
#
# INPUT should take a few seconds at one thread (about 150 MB of JSONL for cl100k here), so that
# the fixed costs (process start, tokenizer load, final fsync) do not set the ratio.
set -euo pipefail
input=${1:?usage: bench/pack_scaling.sh INPUT TOKENIZER [PATTERN] [ROUNDS] [STOKER]}
tokenizer=${2:?tokenizer path}
pattern=${3:-}
rounds=${4:-6}
stoker=${5:-$(dirname "$0")/../build/stoker}
[ -e "$input" ] || { echo "pack_scaling: no such input: $input" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "pack_scaling: needs GNU time (/usr/bin/time)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(pack "$input" --tokenizer "$tokenizer" --overwrite)
[ -n "$pattern" ] && args+=(--pattern "$pattern")

echo "pack_scaling: $(du -h "$input" | cut -f1) of $input, $rounds rounds, $(nproc) cores," \
  "load average $(cut -d' ' -f1 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for threads in 1 2; do
    rm -rf "$out/ds"
    sync
    if ! /usr/bin/time -f "$round $threads %e %U %S %c %w" -a -o "$out/times" \
      "$stoker" "${args[@]}" -o "$out/ds" --num-workers "$threads" >/dev/null 2>"$out/err"; then
      cat "$out/err" >&2
      exit 1
    fi
  done
done
python3 - "$out/times" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r, t, wall, user, sys_, invol, vol = line.split()
    runs[(int(r), int(t))] = (float(wall), float(user) + float(sys_), int(invol) + int(vol))
print("| round | 1 thread wall s | CPU s | ctx switches | 2 threads wall s | CPU s "
      "| ctx switches | speed-up (wall) |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
speedups, cpu_ratios = [], []
for r in sorted({r for r, _ in runs}):
    (w1, c1, s1), (w2, c2, s2) = runs[(r, 1)], runs[(r, 2)]
    speedups.append(w1 / w2)
    cpu_ratios.append(c2 / c1)
    print(f"| {r} | {w1:.2f} | {c1:.2f} | {s1} | {w2:.2f} | {c2:.2f} | {s2} | {w1 / w2:.2f}x |")
print(f"\nmedian speed-up (wall) over the rounds: {statistics.median(speedups):.2f}x; "
      f"median CPU at 2 threads / CPU at 1 thread: {statistics.median(cpu_ratios):.2f}")
PY
echo "load average at the end: $(cut -d' ' -f1 /proc/loadavg)"
