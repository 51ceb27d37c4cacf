#!/usr/bin/env python3
"""Loader only, side by side in one run: stoker's C++ loader vs the torch DataLoader recipe.

Both read the same page-cached Megatron dataset (>= 100 M uint16 tokens, written here with numpy)
with seq_len 2048, batch 32, a global shuffle and concat packing, on the same cores:

  torch:  a Dataset of np.memmap windows (seq_len + 1 tokens -> input_ids, labels),
          DistributedSampler(shuffle=True, drop_last=True), DataLoader(num_workers=cores,
          prefetch_factor=4, persistent_workers=True, drop_last=True)
  stoker: bench/loader_benchmark (the C++ loader, num_workers=cores), which also builds
          position_ids, segment_ids and cu_seqlens

Prints tokens/s, tokens per CPU-second and time to first batch of each, and the ratios (target
>= 20x). stoker runs three times: with all its outputs (4 int64 [B, S] tensors, 32 bytes written
per token), with the recipe's outputs only (input_ids and labels, int64: the same work), and with
all outputs at int32.

  .venv/bin/python bench/loader_vs_torch.py [--tokens 100000000] [--seconds 20]
      [--bench build/bench/loader_benchmark]   (or $STOKER_LOADER_BENCH)
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from bench_data import write_megatron

SEQ_LEN = 2048
BATCH = 32


class MemmapWindows(Dataset):
    """The usual recipe: sample i is tokens [i*S, i*S + S + 1) of the concatenated stream."""

    def __init__(self, bin_path, num_tokens, seq_len):
        self.bin_path = bin_path
        self.seq_len = seq_len
        self.n = (num_tokens - 1) // seq_len
        self.tokens = None  # opened lazily in each worker process

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.tokens is None:
            self.tokens = np.memmap(self.bin_path, dtype=np.uint16, mode="r")
        s = i * self.seq_len
        window = torch.from_numpy(self.tokens[s : s + self.seq_len + 1].astype(np.int64))
        return window[:-1], window[1:]


def cpu_seconds(pid):
    """utime + stime of a process from /proc (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_torch(prefix, tokens, seconds, cores):
    ds = MemmapWindows(prefix + ".bin", tokens, SEQ_LEN)
    sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0, drop_last=True)
    t0 = time.perf_counter()
    dl = DataLoader(ds, batch_size=BATCH, sampler=sampler, num_workers=cores, prefetch_factor=4,
                    persistent_workers=True, drop_last=True)
    it = iter(dl)
    next(it)
    first = time.perf_counter() - t0
    batches = 0
    pids = [os.getpid()] + [w.pid for w in it._workers]
    cpu0 = sum(cpu_seconds(p) for p in pids)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        try:
            x, y = next(it)
        except StopIteration:
            sampler.set_epoch(sampler.epoch + 1)
            it = iter(dl)
            continue
        batches += 1
    elapsed = time.perf_counter() - start
    cpu = sum(cpu_seconds(p) for p in pids) - cpu0
    del it, dl
    tokens_read = batches * BATCH * SEQ_LEN
    return {"tokens_per_s": tokens_read / elapsed, "tokens_per_cpu_s": tokens_read / cpu,
            "first_batch_s": first, "batches": batches}


def run_stoker(bench, prefix, seconds, cores, *flags):
    out = subprocess.run([bench, "--data", prefix, "--workers", str(cores), "--seconds",
                          str(seconds), "--seq-len", str(SEQ_LEN), "--batch", str(BATCH), "--json",
                          *flags],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def find_bench(arg):
    for cand in [arg, os.environ.get("STOKER_LOADER_BENCH"), "build/bench/loader_benchmark",
                 "build-loader/bench/loader_benchmark"]:
        if cand and os.path.exists(cand):
            return cand
    sys.exit("loader_vs_torch: build loader_benchmark first (or pass --bench)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=100_000_000)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--data-dir", default="/tmp/stoker-loader-bench")
    p.add_argument("--bench", default=None)
    a = p.parse_args()
    bench = find_bench(a.bench)
    prefix = os.path.join(a.data_dir, f"py_tokens_{a.tokens}")
    write_megatron(prefix, a.tokens)
    for ext in (".bin", ".idx"):  # page-cache the data for both sides
        with open(prefix + ext, "rb") as f:
            while f.read(1 << 24):
                pass
    print(f"data: {prefix}.bin ({a.tokens / 1e6:.0f} M tokens), seq_len {SEQ_LEN}, batch {BATCH}, "
          f"{a.cores} cores, {a.seconds:.0f} s per side, torch {torch.__version__}")
    s = run_stoker(bench, prefix, a.seconds, a.cores)
    t = run_torch(prefix, a.tokens, a.seconds, a.cores)
    s2 = run_stoker(bench, prefix, a.seconds, a.cores, "--ids-labels-only")
    s32 = run_stoker(bench, prefix, a.seconds, a.cores, "--int32")
    rows = (("stoker", s), ("torch", t), ("stoker ids+labels", s2), ("stoker int32", s32))
    for name, r in rows:
        print(f"{name:17s}: {r['tokens_per_s'] / 1e6:8.1f} M tokens/s  "
              f"{r['tokens_per_cpu_s'] / 1e6:8.1f} M tokens/CPU-s  "
              f"first batch {r['first_batch_s'] * 1e3:7.1f} ms")
    print(f"ratio stoker/torch tokens/s, all outputs: {s['tokens_per_s'] / t['tokens_per_s']:.1f}x "
          f"(target >= 20x); per CPU-second: {s['tokens_per_cpu_s'] / t['tokens_per_cpu_s']:.1f}x; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"same outputs as the recipe (input_ids, labels; int64): "
          f"{s2['tokens_per_s'] / t['tokens_per_s']:.1f}x, per CPU-second "
          f"{s2['tokens_per_cpu_s'] / t['tokens_per_cpu_s']:.1f}x")
    print(f"with int32 tokens (torch recipe stays int64): "
          f"{s32['tokens_per_s'] / t['tokens_per_s']:.1f}x, per CPU-second "
          f"{s32['tokens_per_cpu_s'] / t['tokens_per_cpu_s']:.1f}x")


if __name__ == "__main__":
    main()
