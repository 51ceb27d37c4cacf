"""A tiny Llama-like transformer with document-masked attention, for timing the cost model on CPU.

Shared by bench/balance_bench.py (its calibration figures) and tests/python/test_calibrate.py
(stoker.calibrate on a real model). Attention never crosses documents: each document of the packed
microbatch gets its own causal scaled_dot_product_attention, so its cost grows with L² per
document, as the cost model a·L + b·L² + c says.
"""

import torch
import torch.nn.functional as F


class _Block(torch.nn.Module):
    def __init__(self, hidden, heads, inter):
        super().__init__()
        self.hidden, self.heads = hidden, heads
        self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
        self.o = torch.nn.Linear(hidden, hidden, bias=False)
        self.gate = torch.nn.Linear(hidden, inter, bias=False)
        self.up = torch.nn.Linear(hidden, inter, bias=False)
        self.down = torch.nn.Linear(inter, hidden, bias=False)
        self.n1 = torch.nn.RMSNorm(hidden)
        self.n2 = torch.nn.RMSNorm(hidden)

    def forward(self, x, doc_lengths):
        head_dim = self.hidden // self.heads
        q, k, v = self.qkv(self.n1(x)).view(-1, 3, self.heads, head_dim).unbind(1)
        outs, at = [], 0
        for length in doc_lengths:  # attention never crosses documents
            sl = slice(at, at + length)
            outs.append(F.scaled_dot_product_attention(
                q[sl].transpose(0, 1), k[sl].transpose(0, 1), v[sl].transpose(0, 1),
                is_causal=True).transpose(0, 1))
            at += length
        x = x + self.o(torch.cat(outs).reshape(-1, self.hidden))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class TinyTransformer(torch.nn.Module):
    """Embedding, pre-norm blocks (SwiGLU MLP), LM head; the loss is the ids' own cross-entropy
    (the figures are timings, not learning)."""

    def __init__(self, hidden=256, heads=4, layers=2, inter=688, vocab=2048):
        super().__init__()
        self.vocab = vocab
        self.shape = {"model_type": "llama", "hidden_size": hidden, "intermediate_size": inter,
                      "num_hidden_layers": layers, "num_attention_heads": heads,
                      "vocab_size": vocab}
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(_Block(hidden, heads, inter) for _ in range(layers))
        self.head = torch.nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids, doc_lengths):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x, doc_lengths)
        return F.cross_entropy(self.head(x), ids)

    def step(self, doc_lengths):
        """One forward + backward on a microbatch of random ids with these document lengths."""
        ids = torch.randint(0, self.vocab, (sum(doc_lengths),))
        self(ids, doc_lengths).backward()
        for p in self.parameters():
            p.grad = None

    def train_step(self, batch):
        """The same on a packed batch as stoker gives it (input_ids [1, T], cu_seqlens [n + 1])."""
        cu = batch["cu_seqlens"].tolist()
        lengths = [e - s for s, e in zip(cu, cu[1:])]
        ids = batch["input_ids"].reshape(-1).remainder(self.vocab)
        self(ids, lengths).backward()
        for p in self.parameters():
            p.grad = None
