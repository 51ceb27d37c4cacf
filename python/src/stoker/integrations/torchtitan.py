"""torchtitan's trainer fed by a stoker.Loader: a ``BaseDataLoader`` with its ``Config``.

Pinned against torchtitan 0.3.0 (docs/integrations.md, "torchtitan"). In that release the
trainer's config names a dataloader config, whose ``build()`` the trainer calls with
``dp_world_size``, ``dp_rank``, ``tokenizer``, ``seq_len``, ``local_batch_size`` and
``snapshot_every_n_steps``; the loader yields ``({"input": [B, S], "positions": [B, S]},
labels [B, S])``, labels already shifted with -100 where nothing is trained (torchtitan's loss
ignores -100), positions restarting at each document (from which torchtitan builds block-causal
masks for flex/varlen attention). In a config::

    dataloader=StokerDataLoader.Config(datasets=["/data/tok/web", "/data/tok/code"],
                                       weights=[0.7, 0.3], seed=1234),

The state is stoker's global one: ``state_dict()`` has the same value on every DP rank (DCP
saves it once) and loads at any ``dp_world_size``, where torchtitan's own
``ParallelAwareDataloader`` asserts "dataloader resharding is not supported yet". The batches run
on across the loader's epochs, as torchtitan's ``infinite`` datasets do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Optional, Tuple

import torch
from torchtitan.components.dataloader import BaseDataLoader

from .._loader import Loader
from ._common import check_tokenizer, global_states, states_of

STATE_KEY = "stoker_state"


class StokerDataLoader(BaseDataLoader):
    """torchtitan's dataloader interface over ``stoker.Loader``. Not thread-safe."""

    @dataclass(kw_only=True, slots=True)
    class Config(BaseDataLoader.Config):
        datasets: list = field(default_factory=list)
        """Dataset paths (or ``dataset_path`` alone)."""

        weights: Optional[list] = None
        """Mixture weights, one per dataset (default: equal)."""

        seed: int = 0
        shuffle: str = "global"
        pack: str = "concat"
        long_documents: str = "auto"
        num_workers: int = 0
        """stoker's threads (0: cores / LOCAL_WORLD_SIZE)."""

    def __init__(self, config: Config, *, dp_world_size: int, dp_rank: int,
                 tokenizer: Any = None, seq_len: int, local_batch_size: int,
                 snapshot_every_n_steps: Optional[int] = None, **kwargs: Any) -> None:
        paths = list(config.datasets) or ([config.dataset_path] if config.dataset_path else [])
        if not paths:
            raise ValueError("StokerDataLoader.Config needs datasets=[...] (or dataset_path)")
        if config.weights is not None:
            if len(config.weights) != len(paths):
                raise ValueError(f"StokerDataLoader.Config: {len(config.weights)} weights for "
                                 f"{len(paths)} datasets")
            specs: Any = list(zip(config.weights, paths))
        else:
            specs = paths
        self.loader = Loader(specs, seq_len=seq_len, batch_size=local_batch_size,
                             rank=dp_rank, world_size=dp_world_size, seed=config.seed,
                             shuffle=config.shuffle, pack=config.pack,
                             long_documents=config.long_documents,
                             num_workers=config.num_workers or None, output="torch")
        if tokenizer is not None:
            vocab = tokenizer.get_vocab_size() if hasattr(tokenizer, "get_vocab_size") else None
            check_tokenizer(self.loader, what="torchtitan tokenizer", vocab_size=vocab,
                            eos_id=getattr(tokenizer, "eos_id", None))
        self.config = config
        self.dp_rank, self.dp_world_size = dp_rank, dp_world_size

    def __iter__(self) -> Iterator[Tuple[Dict[str, torch.Tensor], torch.Tensor]]:
        while True:
            delivered = False
            for batch in self.loader:
                delivered = True
                yield ({"input": batch["input_ids"], "positions": batch["position_ids"]},
                       batch["labels"])
            if not delivered:
                raise RuntimeError("stoker.integrations.torchtitan: an epoch of the loader has "
                                   "no batch (fewer documents than one global batch?)")

    def state_dict(self) -> Dict[str, Any]:
        # One JSON string, the same on every DP rank for datasets: DCP stores it once.
        return {STATE_KEY: json.dumps(global_states(self.loader))}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not state_dict:  # torchtitan loads an empty state for a fresh run
            return
        if STATE_KEY not in state_dict:
            raise ValueError("this checkpoint's dataloader state is not stoker's (keys "
                             f"{sorted(state_dict)[:4]}): it was written with another loader, "
                             "whose position stoker cannot continue")
        self.loader.load_state_dict(states_of(json.loads(state_dict[STATE_KEY]),
                                              "torchtitan checkpoint"))
