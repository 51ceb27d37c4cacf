"""Dataset specs and torchrun defaults shared by Loader and plan()."""

from __future__ import annotations

import os
from typing import Optional, Sequence, Tuple, Union

PathLike = Union[str, "os.PathLike[str]"]
DatasetSpec = Union[PathLike, Tuple[float, PathLike]]


def normalize_datasets(datasets: Union[DatasetSpec, Sequence[DatasetSpec]]) -> list[tuple[str, float]]:
    """["a", (0.3, "b")] -> [("a", 1.0), ("b", 0.3)]; ValueError for anything else."""
    if isinstance(datasets, (str, os.PathLike)):
        datasets = [datasets]
    if isinstance(datasets, tuple) and len(datasets) == 2 and isinstance(datasets[0], (int, float)):
        datasets = [datasets]
    out = []
    for spec in datasets:
        if isinstance(spec, (str, os.PathLike)):
            out.append((os.fspath(spec), 1.0))
            continue
        if (isinstance(spec, (tuple, list)) and len(spec) == 2
                and isinstance(spec[0], (int, float)) and not isinstance(spec[0], bool)
                and isinstance(spec[1], (str, os.PathLike))):
            weight = float(spec[0])
            if not weight > 0:
                raise ValueError(f"dataset weight must be > 0, got {spec[0]!r} for {spec[1]!r}")
            out.append((os.fspath(spec[1]), weight))
            continue
        raise ValueError(f"a dataset is a path or a (weight, path) pair, not {spec!r}")
    if not out:
        raise ValueError("at least one dataset is needed")
    return out


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def rank_and_world_size(rank: int | None, world_size: int | None) -> tuple[int, int]:
    """Explicit values win; otherwise torchrun's RANK / WORLD_SIZE; otherwise (0, 1)."""
    if world_size is None:
        world_size = _env_int("WORLD_SIZE") or 1
    if rank is None:
        rank = _env_int("RANK") or 0
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} must be in [0, world_size={world_size})")
    return rank, world_size


class Mixture:
    """A mixture file: named datasets and their weights, in phases over the run.

    ``{"datasets": {"web": "s3://corpus/web", "code": "data/code"},
    "phases": [{"until": "90%", "weights": {"web": 0.8, "code": 0.2}},
    {"weights": {"web": 0.5, "code": [0.5, 0.8]}}]}``: ``until`` is a share of the run
    (``"90%"``, which needs ``total_tokens`` or ``total_steps``), a step (``"12000 steps"``) or a
    token count (``"1.8T tokens"``); ``[a, b]`` ramps a weight linearly across its phase. A key
    ``"tokens_per_step": [{"until": "2000 steps", "tokens": "1M"}, {"tokens": ["1M", "4M"]}...]``
    is a batch-size schedule that a Loader with ``tokens_per_step`` follows (each batch's
    ``step_budget``; docs/plan.md, "Balanced steps"). Relative paths are relative to the
    file. Give it to ``stoker.Loader`` or ``stoker.plan`` in place of the
    datasets; the same file works with ``stoker plan --mixture``. See docs/plan.md, "Schedules".
    """

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"mixture file {self.path!r} does not exist")

    def __repr__(self) -> str:
        return f"stoker.Mixture({self.path!r})"

    def resolve(self, seq_len: int, global_batch_rows: int,
                total_tokens: Union[int, float, str, None] = None,
                total_steps: Optional[int] = None) -> dict:
        """The datasets (``paths``, ``names``, ``weights``) and the phases as global rows."""
        from . import _stoker

        return _stoker.read_mixture(self.path, seq_len, global_batch_rows,
                                    _count_text(total_tokens, "total_tokens"), total_steps)


def _count_text(value: Union[int, float, str, None], name: str) -> Optional[str]:
    """2e12, 2_000_000, "2T" -> the text C++'s ParseCount reads; None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive count such as 2e12 or '2T', not {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a whole count, not {value!r}")
    return str(int(value))


def resolve_datasets(datasets, seq_len: int, global_batch_rows: int,
                     total_tokens=None, total_steps=None):
    """(specs, mixture) for a Loader or plan(): a Mixture's datasets, and what its plan options
    take from it (``phases``, ``run_rows``: the run's length in global rows, ``dataset_names``:
    the names its checkpoints match datasets by, and ``tokens_per_step_schedule``: its
    batch-size schedule over global rows, when it has one); else the specs of normalize_datasets
    and no phases. Give ``mixture`` to apply_mixture."""
    if isinstance(datasets, Mixture):
        mix = datasets.resolve(seq_len, global_batch_rows, total_tokens, total_steps)
        out = {"phases": mix["phases"], "run_rows": mix["run_rows"],
               "dataset_names": mix["names"]}
        if mix["tokens_per_step_schedule"]:  # followed by steps counted in tokens only
            out["tokens_per_step_schedule"] = mix["tokens_per_step_schedule"]
        return list(zip(mix["paths"], mix["weights"])), out
    if total_tokens is not None or total_steps is not None:
        raise ValueError("total_tokens and total_steps go with a stoker.Mixture")
    return normalize_datasets(datasets), {"phases": []}


def apply_mixture(options, mixture: dict) -> None:
    """Sets what resolve_datasets's ``mixture`` gives on plan or loader options."""
    for name, value in mixture.items():
        setattr(options, name, value)
