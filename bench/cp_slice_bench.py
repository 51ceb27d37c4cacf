#!/usr/bin/env python3
"""Context parallelism in the loader: bytes per step (what is copied to the GPU) and loader
throughput with and without CP slicing, at cp = 2, 4, 8, side by side in one run.

Usage: bench/cp_slice_bench.py DATASET [--seq-len 8192] [--batch-size 2]
       [--steps 300] [--repeats 3] [--workers 2]
       bench/cp_slice_bench.py --stream FILE.jsonl... [--shuffle-buffer 1000] [...]
Every configuration pads documents to 16 (a multiple of 2 * cp for cp <= 8), so all of them plan
the same rows; cp = 1 is the whole batch (no slicing). Configurations run interleaved, `repeats`
rounds; the median steps/s of each is printed with the bytes of one step's arrays. With
`--stream` the inputs are raw JSONL read by stoker.Stream (bytes tokenizer, tokenized online;
each CP rank reads the DP rank's whole stream), else one `stoker pack` dataset.
"""

import argparse
import statistics
import time

import numpy as np

import stoker


def source(args):
    if not args.stream:
        return args.dataset[0]
    return stoker.Stream(args.dataset, tokenizer="bytes", shuffle_buffer=args.shuffle_buffer,
                         scan_cache=None)


def run(path, args, cp):
    kw = dict(seq_len=args.seq_len, batch_size=args.batch_size, pack="bestfit",
              num_workers=args.workers, output="numpy", pad_each_document_to=16, seed=1)
    if cp > 1:
        kw["context_parallel"] = (cp, 0)
    with stoker.Loader(source(args), **kw) as loader:
        it = iter(loader)
        first = next(it)
        nbytes = sum(np.asarray(v).nbytes for v in first.values())
        del first
        for _ in range(args.workers * 4):  # past what the ring held before the clock starts
            next(it)
        t0 = time.perf_counter()
        steps = 0
        for _ in range(args.steps):
            try:
                next(it)
            except StopIteration:
                break
            steps += 1
        elapsed = time.perf_counter() - t0
    return nbytes, steps / elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", nargs="+")
    p.add_argument("--stream", action="store_true",
                   help="the inputs are JSONL files read by stoker.Stream")
    p.add_argument("--shuffle-buffer", type=int, default=1000)
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    cps = [1, 2, 4, 8]
    rates = {cp: [] for cp in cps}
    sizes = {}
    for _ in range(args.repeats):
        for cp in cps:
            sizes[cp], rate = run(args.dataset, args, cp)
            rates[cp].append(rate)
    tokens = args.seq_len * args.batch_size
    print(f"{'stream' if args.stream else 'dataset'}: seq_len {args.seq_len}, "
          f"batch_size {args.batch_size}, int64 tokens, "
          f"pad_each_document_to 16, {args.workers} workers, median of {args.repeats}")
    print("| cp | bytes per step | vs cp=1 | steps/s | whole-row tokens/s | vs cp=1 |")
    print("|---|---|---|---|---|---|")
    base = statistics.median(rates[1])
    for cp in cps:
        r = statistics.median(rates[cp])
        print(f"| {cp} | {sizes[cp]:,} | {sizes[cp] / sizes[1]:.3f} | {r:.1f} | "
              f"{r * tokens:,.0f} | {r / base:.2f} |")


if __name__ == "__main__":
    main()
