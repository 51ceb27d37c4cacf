"""Balanced steps (issue 45): per-rank step cost of today's fixed rows against cost-balanced slots,
peers' balancers on the same lengths, stoker.balance's speed, and a calibration of the cost model.

1. Three length distributions (synthetic: no conversation set or published length histogram can be
   read on this machine; the parameters are below, in DISTRIBUTIONS) at W = 8, 64, 512:
   - fixed rows (today's plan, pack=bestfit): windows of 4,096 documents, documents longer than
     seq_len cut into full rows plus a tail, pieces packed by the plan's own best-fit decreasing
     (stoker._stoker.best_fit_decreasing), rows shuffled within the window, step k = rows
     [k·G, (k+1)·G), G = W·rows_per_rank, rank r gets rows [k·G + r·B, k·G + (r+1)·B);
   - balanced: the same pieces of each step through stoker.assign_slots (W ranks, the rows'
     count of microbatches, budget seq_len: where the greedy by cost finds no room, best-fit rows
     dealt to ranks by cost; steps that still needed one more microbatch are counted), and
     balanced_125: the same with a budget of 1.25 × seq_len;
   - transformers' BatchRebalanceSampler (5.23.0, trainer_pt_utils.py; its private _assign on the
     step's pieces: W·B groups of variable count, no token budget) and Megatron-core's
     BalancedCPScheduler (0.16.1, pipeline_parallel/hybrid_cp_schedule.py: the hybrid-CP
     scheduler; 0.16.1 has no DP-only balanced scheduler), each scored with stoker's cost model
     as if its microbatches were packed (varlen attention).
   Figures: mean over steps of max/mean per-rank step cost, and the predicted step-time gain
   Σ max(fixed) / Σ max(balanced) (the same work; equal to the real-token throughput ratio).
2. stoker.balance on 65,536 long-tailed lengths into 512 groups: time and max/mean. verl's
   Karmarkar-Karp is not run: `pip install --dry-run verl` would change installed versions
   (transformers 5.23.0 -> 5.10.4, tokenizers, huggingface_hub, packaging, ...).
3. Calibration: forward + backward of a tiny transformer in torch on CPU, attention per document
   (SDPA, is_causal, one call per document: what varlen / document-masked kernels compute), on
   microbatches of different length mixes; stoker.CostModel.fit, and how well a·L + b·L² + c
   predicts the times (R², relative errors on held-out mixes), beside the FLOPs model's b/a.

Run: .venv/bin/python bench/balance_bench.py [--steps 12] [--skip-calibration] [--json out.json]
"""

import argparse
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

import stoker
from stoker import _stoker

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "tests" / "data" / "model_configs"

# name: (seq_len, rows per rank per step to try, [(share, median tokens, sigma of log), ...],
# max length)
DISTRIBUTIONS = {
    # Chat SFT: conversations, median ~700 tokens, a long tail (long answers, pasted documents).
    "chat (8k rows)": (8192, (1, 4), [(1.0, 700, 1.1)], 32768),
    # Pretraining web + code at 32k: web pages (median 600) and whole files / repositories.
    "code/web (32k rows)": (32768, (1, 4), [(0.7, 600, 1.2), (0.3, 3000, 1.6)], 131072),
    # Long-context phase at 128k: short documents plus books / repositories of tens of thousands.
    "long (128k rows)": (131072, (1, 2), [(0.6, 1000, 1.3), (0.4, 20000, 1.2)], 524288),
}
WINDOW = 4096  # the plan's bestfit_window


def sample_lengths(parts, max_len, n, rng):
    which = rng.choice(len(parts), size=n, p=[p[0] for p in parts])
    out = np.empty(n, dtype=np.int64)
    for i, (_, median, sigma) in enumerate(parts):
        mask = which == i
        out[mask] = np.ceil(rng.lognormal(math.log(median), sigma, mask.sum()))
    return np.clip(out, 1, max_len)


def fixed_rows(lengths, seq_len, rng):
    """Rows as the plan packs them: per window, full rows of long documents, best-fit pieces."""
    rows = []  # each: array of piece lengths
    for start in range(0, len(lengths), WINDOW):
        window = lengths[start:start + WINDOW]
        pieces = []
        window_rows = []
        for length in window:
            full, tail = divmod(int(length), seq_len)
            window_rows.extend([np.array([seq_len])] * full)
            if tail:
                pieces.append(tail)
        pieces = np.array(pieces, dtype=np.uint64)
        if len(pieces) == 0:
            rows.extend(window_rows)
            continue
        bins = np.asarray(_stoker.best_fit_decreasing(pieces, seq_len))
        order = np.argsort(bins, kind="stable")
        splits = np.searchsorted(bins[order], np.arange(1, bins.max() + 1))
        window_rows.extend(np.split(pieces[order].astype(np.int64), splits))
        perm = rng.permutation(len(window_rows))  # the plan's keyed order of a window's rows
        rows.extend(window_rows[i] for i in perm)
    return rows


def rank_costs_fixed(step_rows, world, rows_per_rank, model):
    costs = np.array([model.cost(r).sum() for r in step_rows])
    return costs.reshape(world, rows_per_rank).sum(axis=1)


def rank_costs_balanced(pieces, world, budget, rows_per_rank, model):
    out = stoker.assign_slots(pieces, world, budget, cost=model, min_microbatches=rows_per_rank)
    m = out["microbatches"]
    return np.array(out["slot_cost"]).reshape(world, m).sum(axis=1), m


def rank_costs_transformers(pieces, world, rows_per_rank, model):
    from transformers.trainer_pt_utils import BatchRebalanceSampler

    n = len(pieces)
    sampler = BatchRebalanceSampler(lengths=pieces.tolist(), effective_batch_size=n,
                                    dp_size=world, grad_accum=rows_per_rank, shuffle=False)
    rank_mbs = sampler._assign(list(range(n)), pieces.tolist())
    costs = model.cost(pieces)
    per_rank = np.array([sum(costs[mb].sum() for mb in mbs) for mbs in rank_mbs])
    max_mb_tokens = max(pieces[mb].sum() for mbs in rank_mbs for mb in mbs)
    return per_rank, max_mb_tokens


class _Group:
    def __init__(self, size):
        self._size = size

    def size(self):
        return self._size


def rank_costs_megatron(pieces, world, seq_len, model):
    from megatron.core.pipeline_parallel.hybrid_cp_schedule import BalancedCPScheduler

    sched = BalancedCPScheduler(max_seq_len_per_rank=seq_len, dp_cp_group=_Group(world))
    _, sample_id_groups = sched.get_groups_and_subsamples(
        [(i, int(l)) for i, l in enumerate(pieces)], None)
    costs = model.cost(pieces)
    per_rank = np.zeros(world)
    for ids_per_gpu in sample_id_groups:
        spans = {}
        for ids in ids_per_gpu:
            for i in ids:
                spans[i] = spans.get(i, 0) + 1
        for gpu, ids in enumerate(ids_per_gpu):
            per_rank[gpu] += sum(costs[i] / spans[i] for i in ids)
    return per_rank, len(sample_id_groups)


def attention_share(rows, model):
    """The share of the rows' cost that is attention (b·L² over a·L + b·L² + c)."""
    pieces = np.concatenate(rows).astype(np.float64)
    return float(model.b * (pieces ** 2).sum() / model.cost(pieces).sum())


def max_over_mean(x):
    return float(np.max(x) / np.mean(x))


def compare(args, models):
    results = []
    for dist, (seq_len, rows_options, parts, max_len) in DISTRIBUTIONS.items():
        if args.only and not dist.startswith(args.only):
            continue
        mean_len = sum(p[0] * p[1] * math.exp(p[2] ** 2 / 2) for p in parts)
        for rows_per_rank, world in itertools.product(rows_options, (8, 64, 512)):
            rng = np.random.default_rng(45 + world)
            step_rows = world * rows_per_rank
            tokens_needed = step_rows * seq_len * (args.steps + 1)
            lengths = sample_lengths(parts, max_len, int(tokens_needed / mean_len * 1.2) + WINDOW, rng)
            rows = fixed_rows(lengths, seq_len, rng)
            steps = min(args.steps, len(rows) // step_rows)
            for model_name, model in models.items():
                acc = {k: [] for k in ("fixed", "balanced", "balanced_125", "transformers",
                                       "megatron")}
                peak = {"fixed": 0.0, "balanced": 0.0, "balanced_125": 0.0, "mean": 0.0,
                        "bound": 0.0}
                extra_mb = {"balanced": 0, "balanced_125": 0}
                hf_max_mb = 0
                mg_groups = []
                peer_steps = min(steps, args.peer_steps)
                for k in range(steps):
                    srows = rows[k * step_rows:(k + 1) * step_rows]
                    pieces = np.concatenate(srows)
                    fixed = rank_costs_fixed(srows, world, rows_per_rank, model)
                    acc["fixed"].append(max_over_mean(fixed))
                    peak["fixed"] += fixed.max()
                    peak["mean"] += fixed.mean()  # a perfect balance: every rank at the mean
                    # No assignment's slowest rank is below the mean or the costliest piece.
                    peak["bound"] += max(fixed.mean(), float(model.cost(pieces).max()))
                    # Balanced at the rows' budget (microbatches added where the greedy needs
                    # room), and with 25% more room per microbatch at the rows' count.
                    for name, budget in (("balanced", seq_len), ("balanced_125", seq_len * 5 // 4)):
                        per_rank, m = rank_costs_balanced(pieces, world, budget, rows_per_rank,
                                                          model)
                        extra_mb[name] += m > rows_per_rank
                        acc[name].append(max_over_mean(per_rank))
                        peak[name] += per_rank.max()
                    if k < peer_steps:
                        hf, hf_mb = rank_costs_transformers(pieces, world, rows_per_rank, model)
                        acc["transformers"].append(max_over_mean(hf))
                        hf_max_mb = max(hf_max_mb, hf_mb)
                        if world <= args.megatron_max_world:
                            mg, groups = rank_costs_megatron(pieces, world, seq_len, model)
                            acc["megatron"].append(max_over_mean(mg))
                            mg_groups.append(groups)
                row = {
                    "distribution": dist, "rows_per_rank": rows_per_rank, "world": world,
                    "model": model_name, "steps": steps,
                    "fixed": float(np.mean(acc["fixed"])),
                    "balanced": float(np.mean(acc["balanced"])),
                    "gain": float(peak["fixed"] / peak["balanced"]),
                    # The most any balancer of these steps' documents can gain over fixed rows.
                    "gain_ceiling": float(peak["fixed"] / peak["mean"]),
                    # ... and with whole documents (the costliest piece sets a floor).
                    "gain_bound": float(peak["fixed"] / peak["bound"]),
                    "attention_share": attention_share(rows[:steps * step_rows], model),
                    "steps_with_extra_microbatch": int(extra_mb["balanced"]),
                    "balanced_125": float(np.mean(acc["balanced_125"])),
                    "gain_125": float(peak["fixed"] / peak["balanced_125"]),
                    "steps_with_extra_microbatch_125": int(extra_mb["balanced_125"]),
                    "transformers": float(np.mean(acc["transformers"])) if acc["transformers"] else None,
                    "transformers_max_microbatch_tokens": int(hf_max_mb),
                    "megatron": float(np.mean(acc["megatron"])) if acc["megatron"] else None,
                    "megatron_microbatches": (int(np.max(mg_groups)) if mg_groups else None),
                }
                results.append(row)
                print(json.dumps(row), flush=True)
    return results


def balance_speed(reps=15):
    rng = np.random.default_rng(45)
    lengths = np.minimum(np.ceil(rng.lognormal(math.log(700), 1.1, 65536)), 32768).astype(np.int64)
    model = stoker.CostModel.from_config(CONFIGS / "llama-3.1-8b")
    costs = model.cost(lengths)
    times, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        groups = stoker.balance(lengths, 512, cost=model)
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    sums = np.array([costs[g].sum() for g in groups])
    out = {"items": 65536, "groups": 512, "min_wall_ms": 1e3 * min(times),
           "median_wall_ms": 1e3 * float(np.median(times)), "min_cpu_ms": 1e3 * min(cpu),
           "max_over_mean": float(sums.max() / sums.mean()),
           "load_average": os.getloadavg()[0]}
    print(json.dumps(out), flush=True)
    return out


def calibration(seed=0):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    hidden, heads, layers, inter, vocab = 256, 4, 2, 688, 2048
    head_dim = hidden // heads

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(hidden, 3 * hidden, bias=False)
            self.o = torch.nn.Linear(hidden, hidden, bias=False)
            self.gate = torch.nn.Linear(hidden, inter, bias=False)
            self.up = torch.nn.Linear(hidden, inter, bias=False)
            self.down = torch.nn.Linear(inter, hidden, bias=False)
            self.n1 = torch.nn.RMSNorm(hidden)
            self.n2 = torch.nn.RMSNorm(hidden)

        def forward(self, x, doc_lengths):
            q, k, v = self.qkv(self.n1(x)).view(-1, 3, heads, head_dim).unbind(1)
            outs, at = [], 0
            for length in doc_lengths:  # attention never crosses documents
                sl = slice(at, at + length)
                outs.append(F.scaled_dot_product_attention(
                    q[sl].transpose(0, 1), k[sl].transpose(0, 1), v[sl].transpose(0, 1),
                    is_causal=True).transpose(0, 1))
                at += length
            x = x + self.o(torch.cat(outs).reshape(-1, hidden))
            h = self.n2(x)
            return x + self.down(F.silu(self.gate(h)) * self.up(h))

    emb = torch.nn.Embedding(vocab, hidden)
    blocks = torch.nn.ModuleList(Block() for _ in range(layers))
    head = torch.nn.Linear(hidden, vocab, bias=False)
    params = list(emb.parameters()) + list(blocks.parameters()) + list(head.parameters())

    def step(doc_lengths):
        ids = torch.randint(0, vocab, (sum(doc_lengths),))
        x = emb(ids)
        for b in blocks:
            x = b(x, doc_lengths)
        loss = F.cross_entropy(head(x), ids)
        loss.backward()
        for p in params:
            p.grad = None

    mixes = []
    for total in (1024, 2048, 4096):
        for docs in (1, 2, 4, 16, 64):
            base = total // docs
            mixes.append([base] * docs)
        mixes.append([total // 2, total // 8, total // 8, total // 8, total // 8])
    rng = np.random.default_rng(seed)
    held_out = []
    for _ in range(6):
        lens = np.clip(np.ceil(rng.lognormal(math.log(300), 1.2, 40)), 8, 2048).astype(int)
        lens = lens[np.cumsum(lens) <= 4096]
        held_out.append([int(x) for x in lens])
    step([64, 64])  # warm-up

    def timed(mix, reps=3):
        best = math.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            step(mix)
            best = min(best, time.perf_counter() - t0)
        return best

    samples = [(m, timed(m)) for m in mixes]
    fit = stoker.CostModel.fit(samples)
    errs = [abs(fit.cost(np.array(m)).sum() / t - 1) for m, t in samples]
    held = [(m, timed(m)) for m in held_out]
    held_errs = [abs(fit.cost(np.array(m)).sum() / t - 1) for m, t in held]
    # The same model by FLOPs (config.json's fields), for its b/a.
    config = {"model_type": "llama", "hidden_size": hidden, "intermediate_size": inter,
              "num_hidden_layers": layers, "num_attention_heads": heads, "vocab_size": vocab}
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "balance_bench_config.json"
    tmp.write_text(json.dumps(config))
    flops = stoker.CostModel.from_config(tmp)
    tokens_only = np.polyfit([sum(m) for m, _ in samples], [t for _, t in samples], 1)
    tok_errs = [abs(np.polyval(tokens_only, sum(m)) / t - 1) for m, t in held]
    out = {
        "model": config, "samples": len(samples), "held_out": len(held),
        "fit": {"a": fit.a, "b": fit.b, "c": fit.c, "r_squared": fit.r_squared},
        "fit_b_over_a": fit.b / fit.a if fit.a else None,
        "flops_b_over_a": flops.b / flops.a,
        "mean_abs_rel_error_fit": float(np.mean(errs)),
        "mean_abs_rel_error_held_out": float(np.mean(held_errs)),
        "max_abs_rel_error_held_out": float(np.max(held_errs)),
        "mean_abs_rel_error_held_out_tokens_only": float(np.mean(tok_errs)),
        "times_s": [[len(m), sum(m), t] for m, t in samples],
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(out), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--peer-steps", type=int, default=4,
                    help="steps the peers' (pure Python) balancers run per configuration")
    ap.add_argument("--megatron-max-world", type=int, default=64,
                    help="largest W for Megatron's scheduler (slow pure Python at 512)")
    ap.add_argument("--skip-calibration", action="store_true")
    ap.add_argument("--skip-speed", action="store_true")
    ap.add_argument("--only", default="",
                    help="only the distributions whose name starts with this (e.g. chat)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    models = {name: stoker.CostModel.from_config(CONFIGS / name)
              for name in ("llama-3.1-8b", "qwen2.5-0.5b")}
    out = {"load_average_start": os.getloadavg()[0]}
    if not args.skip_speed:
        out["speed"] = balance_speed()
    out["compare"] = compare(args, models)
    if not args.skip_calibration:
        out["calibration"] = calibration()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
