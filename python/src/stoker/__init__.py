"""stoker: a C++ data pipeline for LLM training, from Python.

``stoker.Loader`` iterates packed, deterministic, resumable batches as torch tensors (zero copy
through DLPack) or NumPy arrays; ``stoker.pack``, ``stoker.inspect``, ``stoker.verify`` and
``stoker.plan`` mirror the command line (``stoker.merge`` finishes a task-split pack, and
``stoker.ray.pack`` runs one on a Ray cluster); ``stoker.Tokenizer`` encodes text as ``stoker pack`` does;
``stoker.balance`` splits documents into equal-count groups of balanced attention cost
(``stoker.CostModel``, fitted to the user's own training step by ``stoker.calibrate``);
``stoker.metrics`` has the loader's live per-source metrics and their
sinks. See docs/python.md.
"""

from ._balance import CostModel, assign_slots, balance
from ._calibrate import Calibration, calibrate, calibration_mixes
from ._loader import Loader, edit_state
from ._stream import Stream, gather_state_dicts
from ._tasks import merge, pack_plan
from ._tokenizer import Tokenizer
from ._chat import ChatTemplate
from ._datasets import Mixture
from ._tools import Plan, inspect, pack, plan, verify
from . import metrics  # sinks import their libraries when built, never here

__version__ = "0.1.0"

__all__ = ["Calibration", "ChatTemplate", "CostModel", "assign_slots", "balance", "calibrate", "calibration_mixes", "Loader", "edit_state", "Mixture", "Stream", "gather_state_dicts", "Plan", "Tokenizer", "inspect", "merge", "pack", "pack_plan", "plan", "verify", "TorchIterableDataset"]


def __getattr__(name):
    # torch is imported only when the adapter is asked for.
    if name == "TorchIterableDataset":
        from .torch_dataset import TorchIterableDataset

        return TorchIterableDataset
    raise AttributeError(f"module 'stoker' has no attribute {name!r}")
