"""stoker.calibrate: fit the cost model a·L + b·L² + c to the user's own training step.

The user's step (forward + backward of THEIR model on one packed microbatch) is timed on
microbatches of the same token budget with different document-length mixes (one long document ...
many short ones), and ``CostModel.fit`` (non-negative least squares, src/plan/cost_model.h) turns
the times into a, b, c. docs/plan.md, "Balanced steps", has the formula.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._balance import CostModel

PathLike = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass(frozen=True)
class Calibration(CostModel):
    """A fitted CostModel with what it was fitted on.

    ``samples``: (document lengths, seconds) of each microbatch, the fastest of its repeats;
    ``residuals``: measured minus predicted seconds, per microbatch (same order).
    ``model_string()`` is the ``"a,b,c"`` that ``Loader(model=...)`` and ``--model-config`` take.
    """

    samples: Tuple[Tuple[Tuple[int, ...], float], ...] = dataclasses.field(
        default=(), compare=False, repr=False)
    residuals: Tuple[float, ...] = dataclasses.field(default=(), compare=False, repr=False)

    def __repr__(self) -> str:
        r2 = "None" if self.r_squared is None else f"{self.r_squared:.4f}"
        return (f"Calibration(a={self.a!r}, b={self.b!r}, c={self.c!r}, r_squared={r2}, "
                f"samples={len(self.samples)}, model={self.model_string()!r})")


def calibration_mixes(max_tokens: int, seed: int = 0) -> List[List[int]]:
    """The document-length mixes ``calibrate`` times by default, deterministic in (max_tokens, seed).

    At two totals, ``max_tokens`` and half of it (so the per-token cost a is told apart from the
    per-document cost c): the total split into 1, 2, 4, 8, 16 and 64 equal documents, one half-long
    document with four of an eighth, and four long-tailed mixes (log-normal lengths, median
    total/16) drawn from ``seed``. A mix never holds more documents than tokens.
    """
    if int(max_tokens) < 2:
        raise ValueError(f"calibrate: max_tokens must be >= 2, got {max_tokens}")
    rng = np.random.default_rng(seed)
    mixes: List[List[int]] = []
    for total in (int(max_tokens), int(max_tokens) // 2):
        for docs in (1, 2, 4, 8, 16, 64):
            if docs > total:
                continue
            base, extra = divmod(total, docs)
            mixes.append([base + (1 if i < extra else 0) for i in range(docs)])
        if total >= 8:
            eighth = total // 8
            mixes.append([total - 4 * eighth] + [eighth] * 4)
        for _ in range(4):
            lengths: List[int] = []
            while sum(lengths) < total:
                length = int(np.clip(np.ceil(rng.lognormal(np.log(max(total / 16, 1)), 1.2)), 1,
                                     total))
                lengths.append(min(length, total - sum(lengths)))
            mixes.append(lengths)
    return mixes


def _packed_batch(lengths: Sequence[int], vocab_size: int, device: Any,
                  generator: Any) -> Dict[str, Any]:
    """A packed microbatch as stoker's token steps give it: one row of sum(lengths) tokens."""
    import torch

    total = int(sum(lengths))
    lens = torch.tensor(list(lengths), dtype=torch.int64)
    input_ids = torch.randint(0, vocab_size, (1, total), generator=generator, dtype=torch.int64)
    starts = torch.cumsum(lens, 0) - lens
    position_ids = torch.arange(total, dtype=torch.int64) - torch.repeat_interleave(starts, lens)
    seq_idx = torch.repeat_interleave(torch.arange(len(lengths), dtype=torch.int32), lens)
    cu_seqlens = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    cu_seqlens[1:] = torch.cumsum(lens, 0).to(torch.int32)
    labels = input_ids.clone().roll(-1, 1)
    labels[0, torch.cumsum(lens, 0) - 1] = -100  # a document's last token has no target
    batch = {"input_ids": input_ids, "labels": labels, "position_ids": position_ids.view(1, -1),
             "cu_seqlens": cu_seqlens, "seq_idx": seq_idx.view(1, -1)}
    batch = {k: v.to(device) for k, v in batch.items()}
    batch["max_seqlen"] = int(max(lengths))
    return batch


def calibrate(step: Callable[[Dict[str, Any]], Any], *, max_tokens: int,
              mixes: Optional[Sequence[Sequence[int]]] = None, seed: int = 0, repeats: int = 3,
              warmup: int = 2, device: Any = "cpu", vocab_size: int = 32000,
              clock: Optional[Callable[[], float]] = None, save: Optional[PathLike] = None,
              progress: bool = True) -> Calibration:
    """Time ``step`` on microbatches of different document-length mixes and fit a·L + b·L² + c.

    ``step(batch)`` is the user's forward + backward (and whatever else a microbatch costs) on one
    packed microbatch: a dict of ``input_ids``, ``labels``, ``position_ids``, ``seq_idx``
    (``[1, T]``) and ``cu_seqlens`` (``[n + 1]`` int32) on ``device``, plus ``max_seqlen`` (int),
    as stoker's token steps carry them; ``input_ids`` are random below ``vocab_size``.
    ``mixes`` (default ``calibration_mixes(max_tokens, seed)``) are the document lengths of each
    microbatch. After ``warmup`` untimed steps, every mix is timed ``repeats`` times (round-robin,
    so a slow spell of the machine spreads over all mixes) and its fastest time kept; on CUDA the
    device is synchronized before and after each step. ``clock`` (default ``time.perf_counter``)
    gives seconds; on a shared CPU machine ``time.process_time`` (with one torch thread) keeps
    other processes out of the times. ``save`` writes the samples as JSONL (``{"lengths": [...], "seconds": s}`` a
    line), what ``stoker bench --calibrate`` fits. Progress goes to stderr.

    Returns a ``Calibration`` (a CostModel with ``r_squared``, ``samples`` and ``residuals``);
    ``Loader(model=cal.model_string())`` or ``--model-config`` with that string uses it.
    """
    import torch

    if clock is None:
        clock = time.perf_counter
    if int(repeats) < 1:
        raise ValueError(f"calibrate: repeats must be >= 1, got {repeats}")
    if mixes is None:
        mixes = calibration_mixes(max_tokens, seed)
    mixes = [[int(x) for x in m] for m in mixes]
    for m in mixes:
        if not m or min(m) < 1 or sum(m) > int(max_tokens):
            raise ValueError(f"calibrate: a mix must hold lengths >= 1 summing to at most "
                             f"max_tokens={max_tokens}, got {m}")
    if len(mixes) < 3:
        raise ValueError(f"calibrate: needs at least 3 mixes, got {len(mixes)}")
    generator = torch.Generator().manual_seed(seed)
    batches = [_packed_batch(m, vocab_size, device, generator) for m in mixes]
    cuda = batches[0]["input_ids"].device if batches[0]["input_ids"].is_cuda else None

    def timed(batch: Dict[str, Any]) -> float:
        if cuda is not None:
            torch.cuda.synchronize(cuda)
        t0 = clock()
        step(batch)
        if cuda is not None:
            torch.cuda.synchronize(cuda)
        return clock() - t0

    def say(text: str) -> None:
        if progress:
            print(f"stoker.calibrate: {text}", file=sys.stderr, flush=True)

    say(f"{warmup} warm-up step(s), then {len(mixes)} microbatches of <= {max_tokens} tokens "
        f"x {repeats} repeat(s)")
    for i in range(int(warmup)):
        timed(batches[i % len(batches)])
    best = [float("inf")] * len(mixes)
    for r in range(int(repeats)):
        started = clock()
        for i, batch in enumerate(batches):
            best[i] = min(best[i], timed(batch))
        say(f"repeat {r + 1}/{repeats} took {clock() - started:.3g} s")
    samples = [(m, s) for m, s in zip(mixes, best)]
    fit = CostModel.fit(samples)
    residuals = tuple(float(s - fit.cost(np.asarray(m)).sum()) for m, s in samples)
    if save is not None:
        with open(os.fspath(save), "w", encoding="utf-8") as f:
            for m, s in samples:
                f.write(json.dumps({"lengths": m, "seconds": s}) + "\n")
    result = Calibration(fit.a, fit.b, fit.c, r_squared=fit.r_squared,
                         samples=tuple((tuple(m), s) for m, s in samples), residuals=residuals)
    say(f"a={result.a:.4g} b={result.b:.4g} c={result.c:.4g} R^2={result.r_squared:.4f}; "
        f"model={result.model_string()!r}")
    return result
