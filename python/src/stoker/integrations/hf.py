"""Hugging Face ``Trainer`` (and TRL's trainers) fed by a stoker.Loader, resuming exactly.

Pinned against transformers 5.23.0 and accelerate 1.16.0 (TRL 1.16.0 for ``StokerSFTTrainer``).
What changes against the Trainer's own data path (docs/integrations.md, "Hugging Face"):

- **Each rank builds its own batches.** ``get_train_dataloader`` returns the loader's batches as
  they are, not a ``DataLoader`` that Accelerate prepares: no dispatch from rank 0, no
  ``IterableDatasetShard`` slicing, no worker processes. The loader's ``rank``/``world_size`` must
  be the Trainer's process index and world size.
- **Resume without skipping.** Each checkpoint folder gets ``stoker_state.json`` (the loader's
  ``Loader.state_dict()``, every rank's for a ``stoker.Stream``), written before
  ``trainer_state.json``; ``train(resume_from_checkpoint=...)`` restores the loader from it, and
  the Trainer's own fast-forward (``skip_first_batches``, which reads and drops every consumed
  batch: transformers #18649) is turned off (``ignore_data_skip``). The world size may change
  between runs: the state is global.
- **The loss sees the global count of trained tokens.** Batches carry stoker's labels (already
  shifted) as ``shift_labels``, so the Trainer's ``num_items_in_batch`` counts exactly the trained
  targets of the accumulated step and sums them over ranks (``average_tokens_across_devices``).
- **Packed rows stay apart.** ``position_ids`` restart at each document, from which transformers
  builds block-diagonal attention; no ``attention_mask`` is passed, and ``use_cache=False``.

The run's length is ``max_steps`` (the batches run on across the loader's epochs).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, Optional

import torch
from transformers import Trainer, TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, get_last_checkpoint

from .._loader import Loader
from ..metrics import Latest, sinks_of
from ._common import check_tokenizer, global_states, states_of, write_json_atomically

STATE_FILE = "stoker_state.json"
CHECKPOINT_FORMAT = "stoker-hf-checkpoint"


def model_inputs(batch: Dict[str, Any]) -> Dict[str, Any]:
    """A stoker batch in a causal LM's forward arguments (plus ``shift_labels``, which the Trainer
    counts for ``num_items_in_batch`` and the model's loss uses as they are)."""
    if "position_ids" not in batch:
        raise ValueError("stoker.integrations.hf: the loader gives no position_ids "
                         "(Loader(position_ids=False)); without them a packed row's documents "
                         "would attend to each other: keep position_ids=True")
    return {"input_ids": batch["input_ids"], "position_ids": batch["position_ids"],
            "labels": batch["labels"], "shift_labels": batch["labels"], "use_cache": False}


class StokerBatches:
    """What ``StokerTrainer.get_train_dataloader`` returns: the loader's batches in the model's
    names, epoch after epoch, fetched one at a time (so ``Loader.state_dict()`` is always the
    position after the last batch the Trainer took). Not thread-safe: one iterator at a time."""

    def __init__(self, loader: Loader, clone: bool = False) -> None:
        self.loader = loader
        self.clone = clone

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        while True:
            delivered = False
            for batch in self.loader:
                delivered = True
                inputs = model_inputs(batch)
                if self.clone:  # the Trainer holds more batches than the ring has slots
                    inputs = {k: v.clone() if torch.is_tensor(v) else v for k, v in inputs.items()}
                yield inputs
            if not delivered:
                raise RuntimeError("stoker.integrations.hf: an epoch of the loader has no batch "
                                   "(fewer documents than one global batch?)")


class StokerCallback(TrainerCallback):
    """Adds the loader's epoch and data stall to the Trainer's logs (``stoker_epoch``,
    ``stoker_stall_share``: the share of the last 30 s the training loop waited for data)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or "loss" not in logs:
            return
        stats = self.loader.stats()
        logs["stoker_epoch"] = self.loader.epoch
        # Loader(metrics=stoker.metrics.Latest()): the latest window's figures (metrics_every =
        # logging_steps logs every window; docs/metrics.md).
        for sink in sinks_of(self.loader, Latest):
            windows = sink.pop()
            if windows:
                logs.update(windows[-1][1])
        if "monitor_stall_share" in stats:
            logs["stoker_stall_share"] = stats["monitor_stall_share"]


class StokerTrainerMixin:
    """Put before a ``transformers.Trainer`` subclass: ``class T(StokerTrainerMixin, SFTTrainer)``.

    ``stoker_loader`` is required (keyword). The Trainer's ``train_dataset`` is not used for
    training batches.
    """

    def __init__(self, *args: Any, stoker_loader: Loader, **kwargs: Any) -> None:
        if not isinstance(stoker_loader, Loader):
            raise TypeError("stoker_loader must be a stoker.Loader")
        super().__init__(*args, **kwargs)
        self.stoker_loader = stoker_loader
        self._check_args()
        self._check_model()
        # First, so that the reporting callbacks (report_to) see the figures it adds to the logs.
        self.callback_handler.callbacks.insert(0, StokerCallback(stoker_loader))

    # -- checks --------------------------------------------------------------------------------

    def _check_args(self) -> None:
        args, loader = self.args, self.stoker_loader
        if args.max_steps is None or args.max_steps <= 0:
            raise ValueError("stoker.integrations.hf: set TrainingArguments(max_steps=...): the "
                             "batches run on across the loader's epochs (one epoch is "
                             f"len(loader) = {len(loader)} steps at this world size)")
        if not args.average_tokens_across_devices:
            raise ValueError("stoker.integrations.hf: average_tokens_across_devices=False would "
                             "normalise each rank's loss by its own token count; StokerTrainer "
                             "gives the loss the global count: leave it True")
        if (loader.rank, loader.world_size) != (args.process_index, args.world_size):
            raise ValueError(
                f"stoker.integrations.hf: the loader is rank {loader.rank} of "
                f"{loader.world_size} and the Trainer's process is {args.process_index} of "
                f"{args.world_size}: build the loader in each process with rank=None, "
                "world_size=None (torchrun's RANK and WORLD_SIZE)")
        # The Trainer's fast-forward reads and drops every consumed batch; the loader's own state
        # replaces it (restored in train()).
        args.ignore_data_skip = True
        # get_batch_samples holds gradient_accumulation_steps batches, and the previous step's
        # are still referenced while it fetches the next: each holds a ring slot until freed.
        # Copy them out of the ring when it is smaller than that.
        slots = self.stoker_loader.options["prefetch_factor"] * self.stoker_loader.num_workers + 1
        self._stoker_clone = 2 * args.gradient_accumulation_steps + 1 > slots

    def _check_model(self) -> None:
        tok = getattr(self, "processing_class", None)
        vocab = len(tok) if tok is not None and hasattr(tok, "__len__") else None
        eos = getattr(tok, "eos_token_id", None)
        emb = None
        model = self.model
        if model is not None and hasattr(model, "get_input_embeddings"):
            layer = model.get_input_embeddings()
            emb = getattr(layer, "num_embeddings", None)
        check_tokenizer(self.stoker_loader, what="model's tokenizer", vocab_size=vocab, eos_id=eos)
        check_tokenizer(self.stoker_loader, what="model", embeddings=emb)

    # -- data ----------------------------------------------------------------------------------

    def get_train_dataloader(self) -> StokerBatches:
        return StokerBatches(self.stoker_loader, clone=self._stoker_clone)

    # -- checkpoints ---------------------------------------------------------------------------

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        # The loader's state (every rank's for a stream), written before the Trainer's own
        # files, so a checkpoint with trainer_state.json always has it beside it.
        states = global_states(self.stoker_loader)
        if self.args.should_save:
            folder = os.path.join(self._get_output_dir(trial=trial),
                                  f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
            write_json_atomically(os.path.join(folder, STATE_FILE), {
                "format": CHECKPOINT_FORMAT, "global_step": self.state.global_step,
                "world_size": self.args.world_size, "states": states})
        super()._save_checkpoint(model, trial)

    def train(self, resume_from_checkpoint: Optional[Any] = None, *args: Any,
              **kwargs: Any) -> Any:
        if isinstance(resume_from_checkpoint, bool):
            if resume_from_checkpoint:
                resume_from_checkpoint = get_last_checkpoint(self.args.output_dir)
                if resume_from_checkpoint is None:
                    raise ValueError(f"no checkpoint found in output_dir {self.args.output_dir!r}")
            else:
                resume_from_checkpoint = None
        if resume_from_checkpoint is not None:
            self.restore_stoker_state(resume_from_checkpoint)
        return super().train(resume_from_checkpoint, *args, **kwargs)

    def restore_stoker_state(self, checkpoint: str) -> None:
        """Puts the loader where the checkpoint folder ``checkpoint`` left it."""
        path = os.path.join(checkpoint, STATE_FILE)
        if not os.path.isfile(path):
            raise ValueError(
                f"{checkpoint}: no {STATE_FILE}: this checkpoint was not written by a "
                "StokerTrainer, so where its data stopped is unknown; resume from one that was")
        with open(path) as f:
            saved = json.load(f)
        if not isinstance(saved, dict) or saved.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{path}: not a {CHECKPOINT_FORMAT} file")
        trainer_state = os.path.join(checkpoint, "trainer_state.json")
        if os.path.isfile(trainer_state):
            with open(trainer_state) as f:
                step = json.load(f).get("global_step")
            if step != saved.get("global_step"):
                raise ValueError(f"{path} is of step {saved.get('global_step')} and "
                                 f"{trainer_state} of step {step}: the checkpoint is inconsistent")
        self.stoker_loader.load_state_dict(states_of(saved.get("states"), path))


class StokerTrainer(StokerTrainerMixin, Trainer):
    """A ``transformers.Trainer`` fed by ``stoker_loader``::

        trainer = StokerTrainer(model=model, args=args, stoker_loader=stoker.Loader(...))
        trainer.train(resume_from_checkpoint=True)   # continues the loader's global order
    """


def _sft_trainer_class() -> type:
    from trl import SFTTrainer

    class StokerSFTTrainer(StokerTrainerMixin, SFTTrainer):
        """TRL's ``SFTTrainer`` fed by ``stoker_loader`` (see ``StokerTrainer``).

        SFTTrainer requires a ``train_dataset``; the batches come from the loader, so when none
        is given a one-row placeholder is passed (and an ``SFTConfig``'s ``dataset_kwargs`` gets
        ``skip_prepare_dataset=True``): TRL tokenizes and packs nothing.
        """

        def __init__(self, *args: Any, stoker_loader: Loader, **kwargs: Any) -> None:
            if kwargs.get("train_dataset") is None:
                import datasets

                kwargs["train_dataset"] = datasets.Dataset.from_dict({"input_ids": [[0]]})
                targs = kwargs.get("args")
                if hasattr(targs, "dataset_kwargs"):  # an SFTConfig
                    targs.dataset_kwargs = {**(targs.dataset_kwargs or {}),
                                            "skip_prepare_dataset": True}
            super().__init__(*args, stoker_loader=stoker_loader, **kwargs)

    StokerSFTTrainer.__module__ = __name__
    return StokerSFTTrainer


def __getattr__(name: str) -> Any:
    # TRL is imported only when its trainer is asked for.
    if name == "StokerSFTTrainer":
        cls = _sft_trainer_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
