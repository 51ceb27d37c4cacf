#!/usr/bin/env python3
"""stoker against the trainers' own loaders on the same pretokenized data, in one run (issue 42):
torchtitan 0.3.0's ``HuggingFaceTextDataLoader`` and megatron-core's ``GPTDataset``.

Measured, each loader in its own child process (a fresh process with its own empty caches; the
data files themselves are in the page cache, just written): tokens/s and CPU seconds per million
tokens over ``--steps`` batches after the first, time to the first batch (from the constructor's
start), and the constructor and first batch over ``--prefixes`` (2,000) small ``.bin``/``.idx``
pairs.

The data: random documents (uint16 tokens below 32,000, each ending in the end-of-document id
32,000) written once with megatron-core's own ``IndexedDatasetBuilder``:

- stoker reads the Megatron prefix directly (``stoker.Loader(prefix)``; 2,000 prefixes: a list of
  them), concat packing, global shuffle, its default threads;
- Megatron: ``BlendedMegatronDatasetBuilder(GPTDataset, ...)`` over the prefix (2,000 prefixes: a
  blend of them, equal weights, as stoker's list), ``reset_position_ids=True`` (position ids
  restarting at each document, as stoker's), read through a torch ``DataLoader`` (sequential
  sampler, which is Megatron's pretraining sampler at DP 1, default collate, ``num_workers=0``);
- torchtitan 0.3.0 cannot read pretokenized data: its loader reads a Hugging Face dataset of text
  and tokenizes it. The closest it offers: ``HuggingFaceTextDataLoader`` over a dataset registered
  in its ``DATASETS`` table, loaded as its C4 recipe does (``load_dataset(..., streaming=True)``),
  here of Parquet files holding the same documents' tokens (a ``tokens`` list column, written
  from the same arrays), with a pass-through tokenizer (``encode`` returns the row's tokens, no
  BOS/EOS added). So its figures include Parquet decoding and its own packing, not tokenization.

All read ``--batch-size`` rows of ``--seq-len`` tokens per step at data-parallel size 1; the
torch loaders run in the main process (``num_workers=0``), so a process's CPU time
(``time.process_time``, every thread) is all the loader's work.

    .venv/bin/python bench/trainer_loaders.py [--steps 600] [--seq-len 2048] [--batch-size 8]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

VOCAB = 32000
EOD = VOCAB  # megatron-core's NullTokenizer(VOCAB).eod


def write_prefix(prefix, lengths, rng):
    """One .bin/.idx pair (megatron-core's IndexedDatasetBuilder) and a Parquet file of the same
    documents' tokens (for torchtitan); every document ends with EOD."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import torch
    from megatron.core.datasets.indexed_dataset import IndexedDatasetBuilder

    builder = IndexedDatasetBuilder(prefix + ".bin", dtype=np.uint16)
    docs = []
    for n in lengths:
        doc = rng.integers(0, VOCAB, int(n), dtype=np.uint16)
        doc[-1] = EOD
        builder.add_document(torch.from_numpy(doc.astype(np.int64)), [int(n)])
        docs.append(doc)
    builder.finalize(prefix + ".idx")
    pq.write_table(pa.table({"tokens": pa.array([d.tolist() for d in docs],
                                                type=pa.list_(pa.uint16()))}),
                   prefix + ".parquet")


def make_data(work, tokens, prefixes, seed=0):
    rng = np.random.default_rng(seed)
    big = os.path.join(work, "big", "docs")
    os.makedirs(os.path.dirname(big))
    lengths = rng.integers(100, 3000, int(tokens / 1550) + 1)
    write_prefix(big, lengths, rng)
    small_dir = os.path.join(work, "small")
    os.makedirs(small_dir)
    for i in range(prefixes):
        write_prefix(os.path.join(small_dir, f"p{i:05d}"), rng.integers(100, 600, 20), rng)
    return big, sorted(p[:-4] for p in glob.glob(os.path.join(small_dir, "*.bin")))


# -- the loaders (built in the child) --------------------------------------------------------------

# Each returns the loader's constructor, its modules imported (a trainer has them imported before
# it builds its data loader): the clock starts at the constructor.

def stoker_loader(args):
    import stoker

    def build(prefixes):
        return stoker.Loader(prefixes if len(prefixes) > 1 else prefixes[0],
                             seq_len=args.seq_len, batch_size=args.batch_size, rank=0,
                             world_size=1, output="torch", monitor_warnings=False)

    return build


def megatron_loader(args):
    import torch
    from megatron.core.datasets.blended_megatron_dataset_builder import (
        BlendedMegatronDatasetBuilder)
    from megatron.core.datasets.gpt_dataset import GPTDataset, GPTDatasetConfig
    from megatron.core.tokenizers.text.libraries.null_tokenizer import NullTokenizer

    def build(prefixes):
        config = GPTDatasetConfig(random_seed=0, sequence_length=args.seq_len,
                                  blend=(prefixes, [1.0] * len(prefixes) if len(prefixes) > 1
                                         else None), split="100,0,0",
                                  tokenizer=NullTokenizer(VOCAB), reset_position_ids=True,
                                  reset_attention_mask=False, eod_mask_loss=False,
                                  create_attention_mask=False,
                                  path_to_cache=os.path.join(args.work, "megatron-cache"))
        samples = (args.steps + 1) * args.batch_size
        train, _, _ = BlendedMegatronDatasetBuilder(GPTDataset, [samples, 0, 0], lambda: True,
                                                    config).build()
        return torch.utils.data.DataLoader(train, batch_size=args.batch_size, num_workers=0)

    return build


def torchtitan_loader(args):
    from datasets import load_dataset
    from torchtitan.components.tokenizer import BaseTokenizer
    from torchtitan.hf_datasets import DatasetConfig
    from torchtitan.hf_datasets import text_datasets
    from torchtitan.hf_datasets.text_datasets import HuggingFaceTextDataLoader

    class PassThrough(BaseTokenizer):
        def encode(self, tokens, add_bos=False, add_eos=False):
            return list(tokens)

        def decode(self, ids):
            return ""

        def get_vocab_size(self):
            return VOCAB + 1

    def build(prefixes):
        files = [p + ".parquet" for p in prefixes]
        text_datasets.DATASETS["pretokenized"] = DatasetConfig(
            path="unused",
            loader=lambda _path: load_dataset("parquet", data_files=files, split="train",
                                              streaming=True),
            sample_processor=lambda sample: sample["tokens"])
        config = HuggingFaceTextDataLoader.Config(dataset="pretokenized", infinite=True)
        return HuggingFaceTextDataLoader(config, dp_world_size=1, dp_rank=0,
                                         tokenizer=PassThrough(), seq_len=args.seq_len,
                                         local_batch_size=args.batch_size)

    return build


LOADERS = {"stoker": stoker_loader, "megatron": megatron_loader, "torchtitan": torchtitan_loader}


def batch_tokens(batch):
    ids = batch["input_ids"] if "input_ids" in batch else (
        batch["tokens"] if isinstance(batch, dict) else batch[0]["input"])
    return ids.numel()


def child(args):
    """One loader, one measurement: prints a JSON line."""
    import torch  # imported before the clock starts, as a trainer has it

    torch.set_num_threads(1)
    if args.child == "megatron":  # Megatron always runs in a process group (one rank here)
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                                             rank=0, world_size=1)
    prefixes = json.loads(args.prefixes_json)
    build = LOADERS[args.child](args)
    t0, c0 = time.perf_counter(), time.process_time()
    loader = build(prefixes)
    init = time.perf_counter() - t0
    it = iter(loader)
    first = batch_tokens(next(it))
    first_batch = time.perf_counter() - t0
    out = {"loader": args.child, "prefixes": len(prefixes), "init_s": init,
           "first_batch_s": first_batch, "first_tokens": first}
    if args.steps:
        t1, c1 = time.perf_counter(), time.process_time()
        tokens = 0
        for _ in range(args.steps):
            tokens += batch_tokens(next(it))
        wall, cpu = time.perf_counter() - t1, time.process_time() - c1
        out.update(tokens=tokens, tokens_per_s=tokens / wall, cpu_s_per_mtok=cpu / tokens * 1e6,
                   steady_wall_s=wall)
    out["total_cpu_s"] = time.process_time() - c0
    print(json.dumps(out), flush=True)


def run_child(name, prefixes, args, steps, work):
    env = dict(os.environ, STOKER_CACHE_DIR=os.path.join(work, f"stoker-cache-{name}"),
               HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1",
               HF_DATASETS_CACHE=os.path.join(work, f"hf-cache-{name}"))
    listing = os.path.join(work, "prefixes.json")
    with open(listing, "w") as f:
        json.dump(prefixes, f)
    cmd = [sys.executable, __file__, "--child", name, "--prefixes-json-file", listing,
           "--steps", str(steps), "--seq-len", str(args.seq_len), "--batch-size",
           str(args.batch_size), "--work", tempfile.mkdtemp(dir=work)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{name} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--prefixes", type=int, default=2000)
    p.add_argument("--loaders", default="stoker,megatron,torchtitan")
    p.add_argument("--child", choices=sorted(LOADERS))
    p.add_argument("--prefixes-json-file")
    p.add_argument("--work")
    args = p.parse_args()
    if args.child:
        with open(args.prefixes_json_file) as f:
            args.prefixes_json = f.read()
        return child(args)

    names = args.loaders.split(",")
    with tempfile.TemporaryDirectory() as work:
        tokens = (args.steps + 20) * args.batch_size * args.seq_len * 1.1
        t = time.perf_counter()
        big, small = make_data(work, tokens, args.prefixes)
        print(f"data: {tokens / 1e6:.1f} M tokens in one prefix, {len(small)} small prefixes "
              f"({time.perf_counter() - t:.0f} s to write)", flush=True)
        print(f"load before: {uptime()}", flush=True)
        rows = []
        for name in names:
            rows.append(run_child(name, [big], args, args.steps, work))
            print(json.dumps(rows[-1]), flush=True)
        for name in names:
            rows.append(run_child(name, small, args, 0, work))
            print(json.dumps(rows[-1]), flush=True)
        print(f"load after: {uptime()}", flush=True)
    print(f"\nseq_len {args.seq_len}, batch {args.batch_size}, {args.steps} steps measured after "
          "the first batch")
    print("| loader | tokens/s | CPU s per M tokens | first batch (1 prefix) | "
          f"init / first batch ({args.prefixes} prefixes) |")
    print("|---|---:|---:|---:|---:|")
    for name in names:
        one = next(r for r in rows if r["loader"] == name and r["prefixes"] == 1)
        many = next(r for r in rows if r["loader"] == name and r["prefixes"] > 1)
        print(f"| {name} | {one['tokens_per_s'] / 1e6:.2f} M | {one['cpu_s_per_mtok']:.3f} | "
              f"{one['first_batch_s']:.3f} s | {many['init_s']:.2f} s / "
              f"{many['first_batch_s']:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
