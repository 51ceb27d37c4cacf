#!/usr/bin/env python3
"""2-thread scaling of stoker.Tokenizer.encode_batch over many short interleaved rounds: the
distribution of the per-round speed-ups, for list and for NumPy output. Not a test.

  .venv/bin/python bench/encode_batch_rounds.py [--rounds 100] [--prose-mb 2] [--code-mb 2]

The text and the vocabulary (cl100k) are those of bench/tokenizer_vs_peers.py. A round encodes
the batch at 1 thread and then at 2 threads, each as an untimed warm-up call followed by a timed
call (freeing the result is part of the call, as for a user who drops it), once for each output
kind; the kinds alternate which goes first. On a VM whose speed drifts by tens of per cent within
a minute, one bench run's best-of-N is one draw; the median and quartiles of 100 rounds of about
0.1 s each are what a difference of a few per cent between two kinds can be read from. The CPU
columns (process time, medians) tell whether two threads used more CPU than one.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tokenizer_vs_peers import bench_texts, cl100k_path  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--prose-mb", type=int, default=2)
    ap.add_argument("--code-mb", type=int, default=2)
    args = ap.parse_args()

    import stoker

    tok = stoker.Tokenizer(str(cl100k_path()), pattern="cl100k")
    texts = bench_texts(args.prose_mb, args.code_mb)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts)} texts, {mb:.2f} MB; {args.rounds} rounds\n")
    kinds = {"lists": False, "NumPy": True}
    speedups = {k: [] for k in kinds}
    cpu = {(k, n): [] for k in kinds for n in (1, 2)}
    for r in range(args.rounds):
        for kind in (list(kinds) if r % 2 == 0 else list(reversed(kinds))):
            wall = {}
            for n in (1, 2):
                bool(tok.encode_batch(texts, num_workers=n, numpy=kinds[kind]))
                c0, t0 = time.process_time(), time.perf_counter()
                bool(tok.encode_batch(texts, num_workers=n, numpy=kinds[kind]))
                wall[n] = time.perf_counter() - t0
                cpu[kind, n].append(time.process_time() - c0)
            speedups[kind].append(wall[1] / wall[2])

    print("| output | speed-up, median | quartiles | rounds >= 1.8x | "
          "CPU ms, 1 thread | CPU ms, 2 threads |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, v in speedups.items():
        q1, _, q3 = statistics.quantiles(v, n=4)
        print(f"| {kind} | {statistics.median(v):.2f}x | {q1:.2f}-{q3:.2f}x "
              f"| {sum(x >= 1.8 for x in v)}/{len(v)} "
              f"| {1e3 * statistics.median(cpu[kind, 1]):.1f} "
              f"| {1e3 * statistics.median(cpu[kind, 2]):.1f} |")


if __name__ == "__main__":
    main()
