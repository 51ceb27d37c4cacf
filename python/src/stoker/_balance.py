"""stoker.balance, stoker.CostModel, stoker.assign_slots: cost-balanced groups of documents.

The plan's cost model (cost(L) = a·L + b·L² + c for a document of L tokens) and its balancers,
for data that does not come from a plan (RL rollouts, a trainer's own batches). The C++ does the
work (src/plan/cost_model.h, balance.h, slot_assignment.h); docs/plan.md, "Balanced steps", has
the formula and the algorithms.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _stoker

PathLike = Union[str, "os.PathLike[str]"]


@dataclasses.dataclass(frozen=True)
class CostModel:
    """cost(L) = a·L + b·L² + c: the cost of training on a document of L tokens.

    ``CostModel()`` counts tokens (a=1). ``CostModel.from_config(path)`` takes a and b from a
    model's config.json (training FLOPs: forward + backward = 3 × forward), ``CostModel.fit``
    from measured times. ``r_squared`` is the fit's coefficient of determination (None unless
    fitted). Raises ValueError for a negative, non-finite or all-zero set of coefficients.
    """

    a: float = 1.0
    b: float = 0.0
    c: float = 0.0
    r_squared: Optional[float] = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        _stoker.validate_cost_model(float(self.a), float(self.b), float(self.c))

    def cost(self, lengths: Any) -> Any:
        """The cost of one length, or of each of an array of lengths (as float64)."""
        if np.isscalar(lengths):
            length = float(lengths)
            return self.a * length + self.b * length * length + self.c
        length = np.asarray(lengths, dtype=np.float64)
        return self.a * length + self.b * length * length + self.c

    def model_string(self) -> str:
        """``"a,b,c"``: what ``Loader(model=...)`` and ``--model-config`` take for this model."""
        return f"{float(self.a)!r},{float(self.b)!r},{float(self.c)!r}"

    @classmethod
    def from_config(cls, path: PathLike) -> "CostModel":
        """a and b of a model's config.json (or of the config.json in a model directory).

        Dense decoders (Llama, Qwen, Mistral, Gemma, GPT-2, ...): linear FLOPs per token (attention
        projections, MLP, LM head) and causal attention's FLOPs per token pair, × 3 for forward +
        backward. Raises FileNotFoundError for a missing file, ValueError for a config it cannot
        count (a mixture of experts, an unknown model_type): give (a, b) instead.
        """
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "config.json")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        a, b, c = _stoker.cost_model_from_config(text, path)
        return cls(a, b, c)

    @classmethod
    def fit(cls, samples: Iterable[Tuple[Sequence[int], float]]) -> "CostModel":
        """The coefficients that best predict measured times.

        ``samples``: (the document lengths of one microbatch, its seconds), at least 3 with
        different length mixes. Non-negative least squares; ``r_squared`` says how well it fits.
        """
        pairs = [([int(x) for x in lengths], float(seconds)) for lengths, seconds in samples]
        a, b, c, r2 = _stoker.fit_cost_model(pairs)
        return cls(a, b, c, r_squared=r2)


CostLike = Union[None, str, "os.PathLike[str]", CostModel, Tuple[float, ...], Callable[[Any], Any]]


def _cost_model(cost: CostLike) -> Optional[CostModel]:
    """The CostModel ``cost`` names; None for a callable (applied by the caller)."""
    if cost is None or (isinstance(cost, str) and cost == "tokens"):
        return CostModel()
    if isinstance(cost, CostModel):
        return cost
    if isinstance(cost, (str, os.PathLike)):
        return CostModel.from_config(cost)
    if isinstance(cost, (tuple, list)):
        if not 2 <= len(cost) <= 3:
            raise ValueError(f"cost: expected (a, b) or (a, b, c), not {cost!r}")
        return CostModel(*(float(x) for x in cost))
    if callable(cost):
        return None
    raise TypeError(
        "cost: expected None or 'tokens', a CostModel, (a, b[, c]), a config.json path or model "
        f"directory, or a function of the lengths array; not {type(cost).__name__}")


def _lengths_array(lengths: Any) -> np.ndarray:
    arr = np.asarray(lengths)
    if arr.ndim != 1:
        raise ValueError(f"lengths: expected a 1-D sequence of token counts, not shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"lengths: expected integers, not {arr.dtype}")
    if arr.size and arr.min() < 0:
        raise ValueError("lengths: token counts must be >= 0")
    return np.ascontiguousarray(arr, dtype=np.uint64)


def balance(lengths: Sequence[int], k: int, cost: CostLike = None) -> List[List[int]]:
    """Splits documents into k groups of equal count with the largest group cost as low as it gets.

    ``lengths``: each document's token count (a list or a NumPy array). ``cost``: None or
    "tokens" (cost = L), a ``CostModel``, ``(a, b)`` or ``(a, b, c)``, a config.json path or model
    directory (``CostModel.from_config``), or a function from the lengths array to the costs
    array. Returns k lists of document indices, each in increasing order: every index once; when
    k does not divide len(lengths), len % k groups hold one more document than the others (the
    balancer picks which; with k > len, some groups are empty). Deterministic: the same input
    gives the same groups. Raises ValueError for k < 1, negative lengths or costs.
    """
    if k < 1:
        raise ValueError(f"balance: k must be at least 1, not {k}")
    arr = _lengths_array(lengths)
    model = _cost_model(cost)
    if model is None:
        costs = np.asarray(cost(arr.astype(np.int64)), dtype=np.float64)  # type: ignore[operator]
        if costs.shape != arr.shape:
            raise ValueError(f"cost: the function returned shape {costs.shape} for {arr.shape} lengths")
    else:
        costs = model.cost(arr)
    return _stoker.balance_groups(np.ascontiguousarray(costs, dtype=np.float64), int(k))


def assign_slots(lengths: Sequence[int], ranks: int, max_tokens_per_microbatch: int,
                 cost: CostLike = None, min_microbatches: int = 1) -> Dict[str, Any]:
    """One window's documents into (rank, microbatch) slots, balanced by cost.

    Every rank gets the same number of microbatches (the least >= ``min_microbatches`` that
    fits), every microbatch at most ``max_tokens_per_microbatch`` tokens, every document exactly
    once; ranks' total costs (their step times) are balanced first, their microbatches second
    (where the greedy finds no room, best-fit rows are dealt to ranks by cost instead).
    ``cost`` as for ``balance`` (not a function). Returns {"ranks", "microbatches", "slots":
    slot r·microbatches + m = rank r's microbatch m, a list of document indices, "slot_tokens",
    "slot_cost"}. Raises ValueError for a document of 0 tokens or above the budget.
    """
    model = _cost_model(cost)
    if model is None:
        raise TypeError("assign_slots: cost must be a CostModel, (a, b[, c]) or a config.json")
    arr = _lengths_array(lengths)
    return _stoker.assign_slots(arr, int(ranks), int(max_tokens_per_microbatch), model.a, model.b,
                                model.c, int(min_microbatches))
