#!/usr/bin/env python3
"""FlexAttention block-mask metadata for a packed batch: stoker's C++ tables against torch's
create_block_mask, on the CPU (and on a GPU when one is present), side by side in one run.

Usage: bench/flex_mask_bench.py [--tokens 32768] [--rows 1] [--block 128] [--repeats 5]
Documents have log-normal lengths (median ~700 tokens, as a packed web/code mix), packed into rows
with a padding run at each row's end. Prints the median time of each way and their ratio.
"""

import argparse
import statistics
import time

import numpy as np
import torch
from torch.nn.attention.flex_attention import create_block_mask

from stoker import flex


def packed_cu_seqlens(rng, rows, seq_len):
    cu = [0]
    for r in range(rows):
        at = 0
        while True:
            n = int(min(seq_len, max(1, rng.lognormal(6.5, 1.0))))
            if at + n > seq_len:
                break
            at += n
            cu.append(r * seq_len + at)
        if at < seq_len:
            cu.append((r + 1) * seq_len)
    return np.array(cu, dtype=np.int32)


def median_ms(fn, repeats, sync=lambda: None):
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=32768)
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    seq_len = args.tokens // args.rows
    cu = packed_cu_seqlens(np.random.default_rng(0), args.rows, seq_len)
    lengths = np.diff(cu)
    seq_idx = torch.from_numpy(np.repeat(np.arange(len(lengths), dtype=np.int32),
                                         lengths)).view(args.rows, seq_len)
    print(f"{args.rows} x {seq_len} tokens, {len(lengths)} segments, block {args.block}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} torch threads")
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    for device in devices:
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        ids = seq_idx.to(device)

        def document_mask(b, h, q, k):
            return (ids[b, q] == ids[b, k]) & (q >= k)

        theirs = median_ms(lambda: create_block_mask(document_mask, args.rows, None, seq_len,
                                                     seq_len, device=device,
                                                     BLOCK_SIZE=args.block),
                           args.repeats, sync)
        tables = median_ms(lambda: flex.block_tables(cu, args.rows, seq_len, args.block),
                           args.repeats)
        ours = median_ms(lambda: flex.block_mask(cu, args.rows, seq_len, args.block,
                                                 device=device, seq_idx=ids),
                         args.repeats, sync)
        print(f"{device}: create_block_mask {theirs:.2f} ms | stoker tables (C++) {tables:.3f} ms"
              f" | stoker BlockMask incl. tensors to {device} {ours:.2f} ms | "
              f"create_block_mask / stoker tables = {theirs / tables:.0f}x")


if __name__ == "__main__":
    main()
