"""Lightning (Trainer and Fabric) and LitGPT fed by a stoker.Loader, resuming exactly.

Pinned against lightning 2.6.6 and litgpt 0.5.13 (docs/integrations.md, "Lightning and LitGPT").

- ``StokerDataLoader(loader)``: what ``train_dataloader()`` returns, or what goes into Fabric's
  checkpoint state. It is *stateful* in Lightning's sense (``state_dict``/``load_state_dict``):
  the Trainer's fit loop saves it in every checkpoint (``loops.fit_loop.state_dict.
  combined_loader``) and restores it on ``fit(ckpt_path=...)``; ``fabric.save``/``fabric.load``
  do the same for a state dict that holds it. It has a length (the loader's steps per epoch), so
  Lightning fetches no batch ahead and the saved position is the last trained batch. Each rank
  builds its own batches: Lightning and Fabric add no ``DistributedSampler`` to it.
- ``StokerDataModule``: a ``LightningDataModule`` that builds the loader for the Trainer's rank
  and world size.
- ``StokerTorchDataLoader``: the same as a torch ``DataLoader``, for Fabric's
  ``setup_dataloaders`` (which takes nothing else).
- ``StokerLitData``: a LitGPT ``DataModule`` for ``litgpt pretrain`` (rows of ``seq_len + 1``
  tokens; LitGPT saves ``train_dataloader`` in its checkpoints and so resumes exactly) or
  LitGPT's finetuning scripts (``{"input_ids", "labels"}`` in LitGPT's unshifted convention).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional

import torch
import torch.utils.data

from .._loader import Loader
from ..metrics import Latest, sinks_of
from ._common import check_tokenizer, global_states, states_of

STATE_FORMAT = "stoker-lightning-loader"


class StokerDataLoader(torch.utils.data.IterableDataset):
    """One epoch of the loader's batches per iteration, stateful for Lightning and Fabric.

    ``transform`` (optional) maps each stoker batch to what the training step takes. Not
    thread-safe: iterate from one thread.
    """

    sampler = None  # Lightning/Fabric look for a sampler to replace: there is none to replace

    def __init__(self, loader: Loader, transform: Optional[Any] = None) -> None:
        super().__init__()
        if not isinstance(loader, Loader):
            raise TypeError("StokerDataLoader wraps a stoker.Loader")
        self.loader = loader
        self.transform = transform

    @property
    def dataset(self) -> "StokerDataLoader":
        # An iterable dataset, so that Fabric's setup_dataloaders adds no DistributedSampler.
        return self

    def __iter__(self) -> Iterator[Any]:
        if torch.utils.data.get_worker_info() is not None:
            raise RuntimeError("StokerDataLoader must not run inside DataLoader worker processes: "
                               "stoker loads with its own threads")
        for batch in self.loader:
            yield batch if self.transform is None else self.transform(batch)

    def __len__(self) -> int:
        return len(self.loader)

    def state_dict(self) -> Dict[str, Any]:
        """The loader's global state (every rank's, for a stream): call it on every rank."""
        return {"format": STATE_FORMAT, "states": global_states(self.loader)}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a {STATE_FORMAT} state (a checkpoint of another data loader?)")
        self.loader.load_state_dict(states_of(state.get("states"), STATE_FORMAT))


class StokerTorchDataLoader(torch.utils.data.DataLoader):
    """A torch ``DataLoader`` (``batch_size=None``, no worker processes) over a
    ``StokerDataLoader``, for code that takes nothing else (Fabric's ``setup_dataloaders``, so
    LitGPT); stateful like it. Not thread-safe."""

    def __init__(self, dataset: StokerDataLoader) -> None:
        super().__init__(dataset, batch_size=None, num_workers=0)

    def state_dict(self) -> Dict[str, Any]:
        return self.dataset.state_dict()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self.dataset.load_state_dict(state)


def _rank_and_world() -> tuple:
    """The process group's rank and size once it is initialised (Lightning and Fabric launch
    the ranks before asking for data), else None, None: the loader reads torchrun's variables."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return None, None


def _lightning_module_base() -> type:
    from lightning import LightningDataModule

    return LightningDataModule


class StokerDataModule(_lightning_module_base()):  # type: ignore[misc]
    """A ``LightningDataModule`` over ``stoker.Loader(datasets, **loader_options)``, built in
    ``train_dataloader()`` for the Trainer's rank and world size."""

    def __init__(self, datasets: Any, transform: Optional[Any] = None,
                 **loader_options: Any) -> None:
        super().__init__()
        if "rank" in loader_options or "world_size" in loader_options:
            raise ValueError("StokerDataModule takes the rank and world size from the Trainer")
        self.datasets = datasets
        self.transform = transform
        self.loader_options = loader_options
        self.loader: Optional[Loader] = None

    def train_dataloader(self) -> StokerDataLoader:
        if self.loader is None:
            rank, world = _rank_and_world()
            trainer = getattr(self, "_trainer", None)
            if trainer is not None:
                rank, world = trainer.global_rank, trainer.world_size
            self.loader = Loader(self.datasets, rank=rank, world_size=world,
                                 **self.loader_options)
        return StokerDataLoader(self.loader, self.transform)

    def teardown(self, stage: str) -> None:
        if self.loader is not None:
            self.loader.close()
            self.loader = None


def _lightning_callback_base() -> type:
    from lightning import Callback

    return Callback


class StokerMetricsCallback(_lightning_callback_base()):  # type: ignore[misc]
    """Hands the loader's metrics windows to the Trainer's loggers (``trainer.loggers``), at the
    stoker step each window ended at: ``StokerDataModule(..., metrics=stoker.metrics.Latest())``
    and ``Trainer(callbacks=[StokerMetricsCallback(data_module)])`` (docs/metrics.md)."""

    def __init__(self, data: Any) -> None:
        super().__init__()
        self.data = data  # a StokerDataModule, or a stoker.Loader

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                           batch_idx: int) -> None:
        loader = self.data if isinstance(self.data, Loader) else getattr(self.data, "loader",
                                                                          None)
        for sink in sinks_of(loader, Latest):
            for step, window in sink.pop():
                for logger in trainer.loggers:
                    logger.log_metrics(window, step=step)


# -- LitGPT ----------------------------------------------------------------------------------


def litgpt_pretrain_rows(batch: Dict[str, Any]) -> torch.Tensor:
    """``[B, seq_len + 1]`` tokens, as ``litgpt pretrain`` takes them (inputs ``[:, :-1]``,
    targets ``[:, 1:]``). Exact only where stoker's labels are the next input token everywhere
    but the last column: ``cross_document_targets=True`` and no padding; ValueError otherwise."""
    ids, labels = batch["input_ids"], batch["labels"]
    inner = labels[:, :-1]
    if not bool((inner == ids[:, 1:]).all()):
        raise ValueError(
            "stoker.integrations.lightning: litgpt pretrain takes targets = the next input token, "
            "and this batch has ignored targets inside its rows (document ends or padding): use "
            "Loader(cross_document_targets=True, pack='concat') on text data, or the 'sft' format")
    return torch.cat([ids, labels[:, -1:].clamp(min=0)], dim=1)


def litgpt_sft_batch(batch: Dict[str, Any]) -> Dict[str, torch.Tensor]:
    """``{"input_ids", "labels"}`` in LitGPT's finetuning convention (the loss compares
    ``logits[:, :-1]`` with ``labels[:, 1:]``): one more column, so every target of stoker's
    shifted labels is kept and none is invented."""
    ids, labels = batch["input_ids"], batch["labels"]
    pad = torch.zeros_like(ids[:, :1])
    ignore = torch.full_like(labels[:, :1], -100)
    return {"input_ids": torch.cat([ids, pad], dim=1), "labels": torch.cat([ignore, labels], dim=1)}


def _litgpt_base() -> type:
    try:
        from litgpt.data import DataModule
    except ImportError:  # LitGPT absent: the class still exists, for Lightning users
        return _lightning_module_base()
    return DataModule


class StokerLitData(_litgpt_base()):  # type: ignore[misc]
    """A LitGPT ``DataModule``: ``data = StokerLitData("tok/web", format="pretrain")``.

    LitGPT's ``connect(tokenizer, batch_size, max_seq_length)`` gives the micro batch size and
    the sequence length: ``pretrain`` rows hold ``max_seq_length`` inputs (the loader's
    ``seq_len``) plus one target; ``sft`` rows hold ``max_seq_length - 1`` tokens plus the
    column LitGPT's shift drops. The tokenizer must be the datasets' (vocabulary and end id).
    LitGPT's GPT takes no position ids: attention crosses document boundaries inside a row, as
    in LitGPT's own packed data; ``format="sft"`` therefore needs rows of one document each
    (``pack="pad"``), or ``cross_document_attention=True`` to accept it.
    """

    def __init__(self, datasets: Any, format: str = "pretrain",
                 cross_document_attention: bool = False, **loader_options: Any) -> None:
        super().__init__()
        if format not in ("pretrain", "sft"):
            raise ValueError(f"format must be 'pretrain' or 'sft', not {format!r}")
        for name in ("rank", "world_size", "batch_size", "seq_len"):
            if name in loader_options:
                raise ValueError(f"StokerLitData takes {name} from LitGPT (connect() and the "
                                 "launched process group), not as an option")
        self.datasets = datasets
        self.format = format
        self.cross_document_attention = cross_document_attention
        self.loader_options = loader_options
        if format == "pretrain":
            self.loader_options.setdefault("cross_document_targets", True)
        self.tokenizer = None
        self.batch_size = 1
        self.seq_length = 2048
        self.loader: Optional[Loader] = None

    def connect(self, tokenizer: Any = None, batch_size: int = 1,
                max_seq_length: Optional[int] = None, **kwargs: Any) -> None:
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        if max_seq_length is not None and max_seq_length > 0:
            self.seq_length = max_seq_length if self.format == "pretrain" else max_seq_length - 1

    def train_dataloader(self) -> StokerTorchDataLoader:
        if self.loader is None:
            rank, world = _rank_and_world()
            self.loader = Loader(self.datasets, seq_len=self.seq_length,
                                 batch_size=self.batch_size, rank=rank, world_size=world,
                                 **self.loader_options)
            tok = self.tokenizer
            if tok is not None:
                check_tokenizer(self.loader, what="LitGPT tokenizer",
                                vocab_size=getattr(tok, "vocab_size", None),
                                eos_id=getattr(tok, "eos_id", None))
        transform = litgpt_pretrain_rows if self.format == "pretrain" else self._sft
        return StokerTorchDataLoader(StokerDataLoader(self.loader, transform))

    def _sft(self, batch: Dict[str, Any]) -> Dict[str, torch.Tensor]:
        if not self.cross_document_attention and "segment_ids" in batch:
            if int(batch["segment_ids"].max()) > 1:
                raise ValueError(
                    "stoker.integrations.lightning: a row holds several documents and LitGPT's "
                    "GPT takes no position ids, so they would attend to each other: use "
                    "pack='pad' (one document per row), or pass "
                    "cross_document_attention=True to accept it")
        return litgpt_sft_batch(batch)

    def val_dataloader(self) -> list:
        return []

    def teardown(self, stage: str = "") -> None:
        if self.loader is not None:
            self.loader.close()
            self.loader = None
