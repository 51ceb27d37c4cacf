#!/usr/bin/env python3
"""stoker under torchrun on CPU (gloo): every rank builds the same plan, takes the same number of
steps, and trains on disjoint rows; a tiny DDP model trains on them.

    torchrun --nproc_per_node 2 examples/distributed.py [--data DATASET] [--epochs 2]

Without --data, rank 0 writes a dataset whose every token id is unique (a 2-D .npy: documents of
37 tokens), so disjointness can be checked token by token (with --data, only where ids repeat
nowhere). Rank and world size come from
torchrun's RANK / WORLD_SIZE (stoker.Loader's defaults). Exit status 0 when every check passes.
"""

import argparse
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import stoker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_tiny_gpt import TinyGPT  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data")
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--train-steps", type=int, default=3, help="steps of DDP training per epoch")
    args = p.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    tmp = tempfile.mkdtemp() if rank == 0 else None
    if args.data is None:
        path = [os.path.join(tmp, "unique.npy")] if rank == 0 else [None]
        if rank == 0:
            np.save(path[0], np.arange(300 * 37, dtype=np.int32).reshape(300, 37))
        dist.broadcast_object_list(path, src=0)
        args.data = path[0]

    loader = stoker.Loader(args.data, seq_len=args.seq_len, batch_size=args.batch_size,
                           num_workers=2, pack="concat", seed=7, remainder="drop_last")
    vocab = int(stoker.inspect(args.data)["tokens"]) + 1
    torch.manual_seed(0)
    model = DistributedDataParallel(TinyGPT(vocab, args.seq_len, dim=32, heads=2, layers=1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    ok = True
    for epoch in range(args.epochs):
        loader.set_epoch(epoch)
        steps, rows = 0, []
        for batch in loader:
            if steps < args.train_steps:
                logits = model(batch["input_ids"], batch["position_ids"], batch["segment_ids"])
                loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(),
                                       ignore_index=-100)
                opt.zero_grad()
                loss.backward()  # an all-reduce: would hang if ranks took different step counts
                opt.step()
            # Only real positions count: padding (segment 0) holds pad_token_id, which is also a
            # real token id in the data, so counting it would look like a token seen twice.
            real = batch["segment_ids"] != 0
            rows.extend(tuple(ids[keep].tolist())
                        for ids, keep in zip(batch["input_ids"], real))
            steps += 1
        everyone = [None] * world
        dist.all_gather_object(everyone, (steps, rows))
        if rank == 0:
            counts = [s for s, _ in everyone]
            tokens = [[t for r in rs for t in r] for _, rs in everyone]
            union = set().union(*map(set, tokens))
            same_steps = len(set(counts)) == 1 and counts[0] == len(loader)
            # Token ids are unique in the generated data: no token twice, on one rank or across.
            disjoint = sum(len(t) for t in tokens) == len(union)
            print(f"epoch {epoch}: steps per rank {counts}, rows per rank "
                  f"{[len(rs) for _, rs in everyone]}, tokens {len(union)}: "
                  f"same steps {same_steps}, disjoint {disjoint}", flush=True)
            ok = ok and same_steps and disjoint
    state = [None] * world
    dist.all_gather_object(state, loader.state_dict())
    if rank == 0:
        same_state = all(s == state[0] for s in state)
        print(f"checkpoint identical on every rank: {same_state}: {state[0]['plan_state']}")
        ok = ok and same_state
    if tmp is not None:
        shutil.rmtree(tmp)
    flag = torch.tensor([int(ok)])
    dist.broadcast(flag, src=0)
    dist.destroy_process_group()
    return 0 if flag.item() else 1


if __name__ == "__main__":
    sys.exit(main())
