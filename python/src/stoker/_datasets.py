"""Dataset specs and torchrun defaults shared by Loader and plan()."""

from __future__ import annotations

import os
from typing import Sequence, Tuple, Union

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
