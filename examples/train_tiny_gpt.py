#!/usr/bin/env python3
"""A few steps of a tiny GPT on CPU, fed by stoker.Loader: packed rows, position_ids restarting at
every document, attention kept within documents (segment_ids), a checkpoint with the loader's
state, a resume, and a check that the resumed run sees exactly the batches the uninterrupted run
saw.

    python examples/train_tiny_gpt.py                 # packs data/sample/corpus.jsonl first
    python examples/train_tiny_gpt.py --data DATASET --steps 20 --checkpoint-at 8

Exit status 0 when the resumed run matched, 1 otherwise.
"""

import argparse
import hashlib
import os
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

import stoker

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab_size, seq_len, dim=64, heads=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(seq_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, position_ids, segment_ids):
        # A token sees earlier tokens of its own document only. Padding (segment 0) sees itself,
        # so its softmax stays defined; its labels are -100 anyway.
        s = input_ids.shape[1]
        causal = torch.ones(s, s, dtype=torch.bool).tril()
        same_doc = segment_ids[:, :, None] == segment_ids[:, None, :]
        mask = (same_doc & causal & (segment_ids[:, :, None] > 0)) | torch.eye(s, dtype=torch.bool)
        x = self.tok(input_ids) + self.pos(position_ids)
        for block in self.blocks:
            x = block(x, mask[:, None])
        return self.head(x)


def loss_of(model, batch):
    logits = model(batch["input_ids"], batch["position_ids"], batch["segment_ids"])
    return F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)


def digest(batch):
    return hashlib.sha256(batch["input_ids"].numpy().tobytes()).hexdigest()[:16]


def make_loader(args):
    return stoker.Loader(args.data, seq_len=args.seq_len, batch_size=args.batch_size,
                         num_workers=2, shuffle="global", pack="bestfit", seed=args.seed)


def train(args, steps, resume_from=None, checkpoint_at=None):
    """Trains to global step `steps`; returns [(step, batch digest, loss)] of the steps it ran."""
    torch.manual_seed(args.seed)
    vocab = stoker.inspect(args.data)["tokenizer"]["vocab_size"]
    model = TinyGPT(vocab, args.seq_len)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    loader = make_loader(args)
    step = 0
    if resume_from:
        ckpt = torch.load(resume_from, weights_only=False)
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        loader.load_state_dict(ckpt["data"])
        step = ckpt["step"]
    log = []
    while step < steps:
        for batch in loader:
            loss = loss_of(model, batch)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            log.append((step, digest(batch), loss.item()))
            if step == checkpoint_at:
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                            "data": loader.state_dict(), "step": step}, args.checkpoint)
            if step == steps:
                break
    return log


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", help="dataset (default: pack data/sample/corpus.jsonl)")
    p.add_argument("--seq-len", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--checkpoint-at", type=int, default=5)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--workdir", help="where the checkpoint goes (default: a temporary dir)")
    args = p.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or tmp
        if args.data is None:
            args.data = os.path.join(workdir, "sample")
            stoker.pack([os.path.join(REPO, "data", "sample", "corpus.jsonl")], args.data,
                        overwrite=True)
        args.checkpoint = os.path.join(workdir, "ckpt.pt")
        print(f"dataset {args.data}: {stoker.inspect(args.data)['tokens']} tokens, "
              f"{len(make_loader(args))} steps per epoch")

        full = train(args, args.steps, checkpoint_at=args.checkpoint_at)
        resumed = train(args, args.steps, resume_from=args.checkpoint)
    for step, d, loss in full:
        print(f"step {step:3d}  batch {d}  loss {loss:.4f}")
    after = full[args.checkpoint_at:]
    same_batches = [(s, d) for s, d, _ in after] == [(s, d) for s, d, _ in resumed]
    same_losses = all(abs(a[2] - b[2]) <= 1e-4 * max(1.0, abs(a[2])) for a, b in zip(after, resumed))
    print(f"resumed at step {args.checkpoint_at}: {len(resumed)} steps, same batches: "
          f"{same_batches}, same losses: {same_losses}")
    return 0 if same_batches and same_losses and len(resumed) == len(after) else 1


if __name__ == "__main__":
    sys.exit(main())
