#!/usr/bin/env python3
"""An elastic resume of a stoker.Stream under torchrun (gloo, CPU): W ranks stop mid-epoch and save
every rank's state; W' ranks resume from it and finish the epoch. Every document piece delivered is
recorded through batch["provenance"], and the run checks that no token of the epoch came twice.

    torchrun --nproc_per_node 4 examples/elastic_stream.py --workdir /tmp/el --phase save
    torchrun --nproc_per_node 3 examples/elastic_stream.py --workdir /tmp/el --phase resume

Without --data, rank 0 of the save phase writes a JSONL corpus into the workdir. Exit status 0
when every check passes (docs/streaming.md, "Elastic resume").
"""

import argparse
import glob
import json
import os

import numpy as np
import torch
import torch.distributed as dist

import stoker


def write_corpus(workdir):
    paths = []
    for f, n in enumerate([400, 60, 0, 250, 120]):
        p = os.path.join(workdir, f"part-{f}.jsonl")
        with open(p, "w") as out:
            for i in range(n):
                out.write(json.dumps({"text": " ".join([f"doc {f}-{i}"] * (1 + (7 * i + f) % 9))})
                          + "\n")
        paths.append(p)
    return paths


def pieces(batch):
    """(file, byte offset, first token, end token) of every piece from the epoch's own stream."""
    return [(p["source"], p["byte_offset"], p["offset"], p["offset"] + p["length"])
            for row in batch["provenance"] for p in row if p["stream_epoch"] == 0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--phase", choices=["save", "resume"], required=True)
    ap.add_argument("--data", help="JSONL files (a glob); default: a corpus written here")
    ap.add_argument("--steps", type=int, default=20, help="save: steps before the checkpoint")
    args = ap.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    os.makedirs(args.workdir, exist_ok=True)
    if args.data is None:
        if args.phase == "save" and rank == 0:
            write_corpus(args.workdir)
        dist.barrier()
        args.data = os.path.join(args.workdir, "part-*.jsonl")
    stream = stoker.Stream(sorted(glob.glob(args.data)), tokenizer="bytes", shuffle_buffer=100)
    loader = stoker.Loader(stream, seq_len=64, batch_size=2, num_workers=2, pack="bestfit", seed=1,
                           output="torch", pin_memory=False, provenance=True)
    mine, steps = [], 0
    ckpt = os.path.join(args.workdir, "loader_states.json")
    if args.phase == "resume":
        with open(ckpt) as f:
            saved = json.load(f)
        loader.load_state_dict(saved["states"])  # every old rank's state: this rank's share
    for batch in loader:
        t = torch.ones(1)
        dist.all_reduce(t)  # a rank with fewer steps would leave the others waiting here
        mine += pieces(batch)
        steps += 1
        if args.phase == "save" and steps == args.steps:
            break
    states = stoker.gather_state_dicts(loader)
    everything = [None] * world
    dist.all_gather_object(everything, (steps, mine))
    ok = True
    if rank == 0:
        counts = [s for s, _ in everything]
        ok = len(set(counts)) == 1
        seen = [p for _, m in everything for p in m]
        if args.phase == "save":
            with open(ckpt, "w") as f:
                json.dump({"states": states, "seen": seen, "world": world}, f)
            print(f"saved {world} states after {counts[0]} steps on every rank")
        else:
            seen += [tuple(p) for p in saved["seen"]]
            tokens = {}
            for src, off, b, e in seen:
                c = tokens.setdefault((src, off), np.zeros(0, np.int32))
                if len(c) < e:
                    c = tokens[(src, off)] = np.pad(c, (0, e - len(c)))
                c[b:e] += 1
            twice = sum(int((c > 1).sum()) for c in tokens.values())
            ok = ok and twice == 0
            print(f"elastic resume {saved['world']} -> {world}: {counts[0]} more steps on every "
                  f"rank, {len(tokens)} documents delivered in the epoch, tokens delivered twice: "
                  f"{twice}")
    loader.close()
    flag = [ok]
    dist.broadcast_object_list(flag, src=0)
    dist.destroy_process_group()
    raise SystemExit(0 if flag[0] else 1)


if __name__ == "__main__":
    main()
