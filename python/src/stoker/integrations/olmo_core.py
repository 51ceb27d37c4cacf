"""OLMo-core's Trainer fed by a stoker.Loader: a ``DataLoaderBase`` (``TextDataLoaderBase``).

Pinned against ai2-olmo-core 3.0.0 (docs/integrations.md, "OLMo-core"). OLMo-core's contract,
as its ``Trainer._fit_epoch`` and ``TransformerTrainModule`` use it:

- ``global_batch_size`` is counted in tokens: ``seq_len x batch_size x dp_world_size``; each
  rank's batch holds ``rank_batch_size`` tokens (``batch_size`` rows of ``seq_len``).
- A batch is ``input_ids [B, S]``, ``labels`` (already shifted, -100 where ignored: the train
  module uses them as they are), ``label_mask`` (bool ``[B, S]``: whether token t is a trained
  target, OLMo-core's convention before its own shift), ``doc_lens`` (``[B, max documents]``,
  0-padded, each row summing to S: one entry per piece and per padding run, as stoker's
  ``cu_seqlens``) and ``max_doc_lens`` (one int per row), from which the model builds
  intra-document attention.
- ``reshuffle(epoch)`` (1-based, called before every epoch, also after a resume) moves the loader
  to that epoch unless it is already inside it; ``reset()`` after the epoch.
- ``state_dict()`` is the loader's global state; OLMo-core saves it in each rank's
  ``train/rank{N}.pt`` and, on another world size, loads rank 0's: stoker's state is the same on
  every rank, so any DP size resumes the same global order.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, Optional

import torch
from olmo_core.data.collator import DataCollator
from olmo_core.data.data_loader import TextDataLoaderBase

from .._loader import Loader
from ._common import check_tokenizer, doc_lens_of, global_states, states_of

STATE_FORMAT = "stoker-olmo-core-loader"


def olmo_batch(batch: Dict[str, Any]) -> Dict[str, Any]:
    """A stoker batch in OLMo-core's names."""
    ids, labels = batch["input_ids"], batch["labels"]
    rows, seq_len = ids.shape
    label_mask = torch.zeros_like(ids, dtype=torch.bool)
    label_mask[:, 1:] = labels[:, :-1] != -100
    doc_lens = doc_lens_of(batch["cu_seqlens"], rows, seq_len)
    return {"input_ids": ids, "labels": labels, "label_mask": label_mask, "doc_lens": doc_lens,
            "max_doc_lens": doc_lens.max(dim=1).values.tolist()}


class StokerDataLoader(TextDataLoaderBase):
    """``StokerDataLoader(loader, work_dir=..., dp_world_size=..., dp_rank=...)``.

    ``loader`` must be built for the same data-parallel rank and size (its ``rank`` and
    ``world_size``); ``vocab_size``/``eos_token_id`` (the model's tokenizer config) are checked
    against the datasets when given.
    """

    def __init__(self, loader: Loader, *, work_dir: str, dp_world_size: int = 1,
                 dp_rank: int = 0, fs_local_rank: Optional[int] = None,
                 vocab_size: Optional[int] = None, eos_token_id: Optional[int] = None,
                 pad_token_id: int = 0) -> None:
        if not isinstance(loader, Loader):
            raise TypeError("StokerDataLoader wraps a stoker.Loader")
        if (loader.rank, loader.world_size) != (dp_rank, dp_world_size):
            raise ValueError(f"stoker.integrations.olmo_core: the loader is rank {loader.rank} of "
                             f"{loader.world_size} and OLMo-core's data-parallel rank is "
                             f"{dp_rank} of {dp_world_size}: build the loader with "
                             "rank=dp_rank, world_size=dp_world_size")
        opts = loader.options
        if not opts["position_ids"] or not opts["segment_ids"]:
            raise ValueError("stoker.integrations.olmo_core needs the loader's cu_seqlens and "
                             "position_ids (Loader(position_ids=True, segment_ids=True))")
        check_tokenizer(loader, what="OLMo-core tokenizer config", eos_id=eos_token_id,
                        embeddings=vocab_size)
        self.loader = loader
        self.seq_len = loader.seq_len
        self.rows = loader.batch_size
        self.vocab_size = vocab_size
        super().__init__(collator=DataCollator(pad_token_id=pad_token_id), work_dir=work_dir,
                         global_batch_size=self.seq_len * self.rows * dp_world_size,
                         dp_world_size=dp_world_size, dp_rank=dp_rank,
                         fs_local_rank=fs_local_rank)

    @property
    def total_batches(self) -> int:
        return len(self.loader)

    def reshuffle(self, epoch: Optional[int] = None, **kwargs: Any) -> None:
        if epoch is None:
            epoch = 1 if self._epoch is None else self._epoch + 1
        if epoch < 1:
            raise ValueError(f"OLMo-core epochs start at 1, got {epoch}")
        self._epoch = epoch
        self.loader.set_epoch(epoch - 1)  # stays put inside a resumed epoch

    def _iter_batches(self) -> Iterable[Dict[str, Any]]:
        for batch in self.loader:
            yield olmo_batch(batch)

    def state_dict(self) -> Dict[str, Any]:
        return {"format": STATE_FORMAT, "states": global_states(self.loader),
                "epoch": self._epoch, "batches_processed": self.batches_processed,
                "tokens_processed": self.tokens_processed}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        if not isinstance(state_dict, dict) or state_dict.get("format") != STATE_FORMAT:
            raise ValueError(f"not a {STATE_FORMAT} state: the checkpoint was written with "
                             "another data loader (OLMo-core's own?), whose position stoker "
                             "cannot continue")
        self.loader.load_state_dict(states_of(state_dict.get("states"), STATE_FORMAT))
        self._epoch = state_dict.get("epoch") or self._epoch
        self.batches_processed = state_dict.get("batches_processed", 0)
        self.tokens_processed = state_dict.get("tokens_processed", 0)

    def get_mock_batch(self) -> Dict[str, Any]:
        rng = torch.Generator().manual_seed(self.dp_rank)
        vocab = self.vocab_size or 256
        ids = torch.randint(0, vocab, (self.rows, self.seq_len), generator=rng)
        split = self.seq_len // 2
        doc_lens = torch.tensor([[split, self.seq_len - split]] * self.rows, dtype=torch.int32)
        labels = torch.nn.functional.pad(ids[:, 1:], (0, 1), value=-100)
        return {"input_ids": ids, "labels": labels,
                "label_mask": torch.ones_like(ids, dtype=torch.bool), "doc_lens": doc_lens,
                "max_doc_lens": [max(split, self.seq_len - split)] * self.rows}
