"""Megatron (megatron-core) fed by stoker: a dataset for BlendedMegatronDatasetBuilder, and an
external iterator whose restore needs nothing but Megatron's own checkpoint.

Pinned against megatron-core 0.16.1 (docs/integrations.md, "Megatron"). Both give each sample in
``GPTDataset``'s keys: ``tokens``, ``labels`` (the next token; 0 where nothing is trained),
``loss_mask`` (float, 1 where trained), ``position_ids`` (restarting at each document), and
``attention_mask`` (``[1, S, S]`` bool, True where attention is *masked*, block-causal per
document) when the config asks for it, and Megatron's packed-sequence (THD) fields
(``cu_seqlens``, ``cu_seqlens_argmin``, ``cu_seqlens_unpadded``, ``cu_seqlens_unpadded_argmin``,
``max_seqlen``: ``packed_sequence_fields``) unless ``packed_sequence=False``.

Why a position is enough: Megatron's pretraining sampler hands data-parallel rank r the samples
``[k·G + r·m, k·G + (r+1)·m)`` of global batch k (G = m x DP), which is exactly how a stoker plan
splits a global batch among ranks, and the plan's order is a pure function of the global row
index. So:

- ``StokerGPTDataset`` (``BlendedMegatronDatasetBuilder(StokerGPTDataset, sizes,
  is_built_on_rank, StokerGPTDatasetConfig(...)).build()``) serves sample i as global row i of the
  plan, from a loader built for this DP rank; Megatron's own resume (the sampler starting at
  ``consumed_train_samples``) lands on the right row at any DP size, with one seek.
- ``StokerMegatronIterator`` (``--dataloader-type external``) yields micro-batches; it has
  ``save_state()``/``load_state()`` for a checkpoint, and ``seek(consumed_samples)``, which is
  the restore Megatron's checkpoint flow reaches: every Megatron checkpoint stores
  ``consumed_train_samples``, and the provider builds the iterator after loading it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

import numpy
import torch
from megatron.core.datasets.gpt_dataset import GPTDatasetConfig
from megatron.core.datasets.megatron_dataset import MegatronDataset

from .._loader import Loader
from ._common import check_tokenizer, doc_lens_of, global_states, states_of

STATE_FORMAT = "stoker-megatron-iterator"


def _dp_rank_and_size() -> tuple:
    """Megatron's data-parallel rank and size once parallel_state is initialised, else the
    process group's, else (0, 1)."""
    try:
        from megatron.core import parallel_state

        if parallel_state.model_parallel_is_initialized():
            return (parallel_state.get_data_parallel_rank(),
                    parallel_state.get_data_parallel_world_size())
    except (ImportError, AssertionError):
        pass
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


PACKED_KEYS = ("cu_seqlens", "cu_seqlens_argmin", "cu_seqlens_unpadded",
               "cu_seqlens_unpadded_argmin", "max_seqlen")


def packed_sequence_fields(cu_seqlens: torch.Tensor, rows: int, seq_len: int,
                           cu_seqlens_padded: Optional[torch.Tensor] = None
                           ) -> Dict[str, torch.Tensor]:
    """Megatron's packed-sequence (THD) fields of each of ``rows`` rows, from a stoker batch's
    ``cu_seqlens`` (over the ``rows x seq_len`` flattened tokens) and, with
    ``pad_each_document_to``, its ``cu_seqlens_padded``, in the names and dtypes of Megatron's
    packed SFT samples:

    - ``cu_seqlens``: int32 ``[rows, seq_len + 1]``, the row's segment boundaries (its documents,
      each with its padding, and its padding run) from 0 to ``seq_len``, then ``seq_len``
      repeated: a fixed shape that collates, whose tail is zero-length segments (megatron-core's
      ``HybridCPDataLoaderWrapper.unpack_batch`` skips them);
    - ``cu_seqlens_argmin``: int64 ``[rows, 1]``, where the boundaries end (``cu_seqlens[:argmin]``
      is what ``PackedSeqParams`` takes, as Megatron-Bridge's ``get_packed_seq_params`` cuts it);
    - ``cu_seqlens_unpadded`` and ``cu_seqlens_unpadded_argmin``: the same segments by their real
      lengths (the running sum of each document's tokens without its padding, then that sum
      repeated): Megatron's ``cu_seqlens`` of ``get_thd_batch_on_this_cp_rank``, beside
      ``cu_seqlens`` as its ``cu_seqlens_padded``. Without padding they equal ``cu_seqlens``;
    - ``max_seqlen``: int32 ``[rows, 1]``, the longest segment of the row (padded).
    """
    padded = cu_seqlens if cu_seqlens_padded is None else cu_seqlens_padded
    lens = doc_lens_of(padded, rows, seq_len)
    cu = torch.full((rows, seq_len + 1), seq_len, dtype=torch.int32)
    cu[:, 0] = 0
    cu[:, 1:1 + lens.shape[1]] = torch.cumsum(lens, dim=1, dtype=torch.int32)
    ends = ((lens > 0).sum(dim=1, keepdim=True) + 1).to(torch.int64)
    if cu_seqlens_padded is None:
        unpadded = cu.clone()
    else:
        c = cu_seqlens.to(torch.int64)
        real = doc_lens_of(padded, rows, seq_len, lengths=c[1:] - c[:-1])
        n = real.shape[1]
        unpadded = torch.zeros((rows, seq_len + 1), dtype=torch.int32)
        unpadded[:, 1:1 + n] = torch.cumsum(real, dim=1, dtype=torch.int32)
        unpadded[:, 1 + n:] = unpadded[:, n:n + 1]
    return {"cu_seqlens": cu, "cu_seqlens_argmin": ends, "cu_seqlens_unpadded": unpadded,
            "cu_seqlens_unpadded_argmin": ends.clone(),
            "max_seqlen": lens.max(dim=1, keepdim=True).values.to(torch.int32)}


def megatron_sample(ids: torch.Tensor, labels: torch.Tensor, positions: torch.Tensor,
                    segments: Optional[torch.Tensor], attention_mask: bool,
                    packed: Optional[Dict[str, torch.Tensor]] = None) -> Dict[str, Any]:
    """One row (or a batch of rows) of a stoker batch in GPTDataset's keys, plus ``packed``
    (``packed_sequence_fields`` of the same rows) when given."""
    trained = labels != -100
    out = {"tokens": ids.long(), "labels": torch.where(trained, labels, 0).long(),
           "loss_mask": trained.float(), "position_ids": positions.long()}
    if attention_mask:
        if segments is None:
            raise ValueError("an attention mask needs the loader's segment_ids")
        s = segments.shape[-1]
        same = segments.unsqueeze(-1) == segments.unsqueeze(-2)
        causal = torch.ones(s, s, dtype=torch.bool).tril()
        allowed = same & causal & (segments != 0).unsqueeze(-1)
        out["attention_mask"] = (~allowed).unsqueeze(-3)  # [..., 1, S, S], True = masked
    if packed is not None:
        out.update(packed)
    return out


def _packed_of(batch: Dict[str, torch.Tensor]) -> Optional[Dict[str, torch.Tensor]]:
    """The packed fields held in a _GlobalRows batch (None when not asked for)."""
    if "cu_seqlens_argmin" not in batch:
        return None
    return {k: batch[k] for k in PACKED_KEYS}


class _GlobalRows:
    """This DP rank's rows of the plan, by global row index, with a seek only where the index
    jumps (Megatron resumes at consumed_train_samples, or another DP size). Not thread-safe."""

    def __init__(self, loader: Loader, world_size: int, rank: int, micro_batch_size: int,
                 packed: bool) -> None:
        self.loader = loader
        self.packed = packed
        self.global_rows = micro_batch_size * world_size
        self.rank, self.micro = rank, micro_batch_size
        self.batch: Optional[Dict[str, torch.Tensor]] = None
        self.batch_start = -1  # global index of the batch's first row
        self.iterator: Optional[Iterator[Dict[str, Any]]] = None
        self._epoch_rows: List[int] = []

    def position(self, global_row: int) -> tuple:
        """(epoch, rows consumed within it) of a global row index over the epochs."""
        epoch = 0
        while True:
            while len(self._epoch_rows) <= epoch:
                e = len(self._epoch_rows)
                self._epoch_rows.append(self.loader.steps_per_epoch(e) * self.global_rows)
            if self._epoch_rows[epoch] == 0:
                raise ValueError("stoker.integrations.megatron: an epoch with no global batch")
            if global_row < self._epoch_rows[epoch]:
                return epoch, global_row
            global_row -= self._epoch_rows[epoch]
            epoch += 1

    def seek(self, global_row: int) -> None:
        """Moves to the global batch that holds ``global_row``."""
        start = global_row - global_row % self.global_rows
        epoch, rows = self.position(start)
        self.loader.load_state_dict(self.loader.state_dict_at(epoch, rows // self.global_rows))
        self.iterator = None
        self.batch = None
        self.batch_start = start - self.global_rows  # next_batch() reads the batch at start

    def next_batch(self) -> Dict[str, torch.Tensor]:
        while True:
            if self.iterator is None:
                self.iterator = iter(self.loader)
            try:
                batch = next(self.iterator)
                break
            except StopIteration:
                self.iterator = None  # the next epoch
        self.batch = {k: v.clone() for k, v in batch.items()
                      if torch.is_tensor(v) and k not in ("cu_seqlens", "cu_seqlens_padded")}
        if self.packed:  # per row: row() and the iterator slice every key by row
            ids = self.batch["input_ids"]
            self.batch.update(packed_sequence_fields(batch["cu_seqlens"], *ids.shape,
                                                     batch.get("cu_seqlens_padded")))
        self.batch_start += self.global_rows
        return self.batch

    def row(self, global_row: int) -> Dict[str, torch.Tensor]:
        start = global_row - global_row % self.global_rows
        local = global_row - start - self.rank * self.micro
        if not 0 <= local < self.micro:
            raise IndexError(f"global row {global_row} is not data-parallel rank {self.rank}'s "
                             f"(micro batch {self.micro}, {self.global_rows // self.micro} ranks): "
                             "use Megatron's pretraining sampler, or the external iterator")
        if start != self.batch_start:
            if start != self.batch_start + self.global_rows:
                self.seek(global_row)
            self.next_batch()
        return {k: v[local] for k, v in self.batch.items()}


@dataclass
class StokerGPTDatasetConfig(GPTDatasetConfig):
    """``GPTDatasetConfig`` plus what the plan needs: the micro batch size (rows per rank per
    step) and stoker's options. ``blend`` names stoker datasets (paths and weights), as Megatron
    names its prefixes; ``sequence_length``, ``random_seed`` and ``tokenizer`` are Megatron's."""

    micro_batch_size: int = 1
    packed_sequence: bool = True
    """Add Megatron's packed-sequence fields (``cu_seqlens``, ``max_seqlen``...:
    ``packed_sequence_fields``) to each sample, for THD (packed) training."""
    pack: str = "concat"
    shuffle: str = "global"
    num_workers: int = 0


class StokerGPTDataset(MegatronDataset):
    """A ``MegatronDataset`` over one stoker dataset or mixture file (``blend=([path], None)``):
    sample i = global row i of its plan. A mixture is stoker's (a ``stoker.Mixture`` file), not
    Megatron's ``BlendedDataset``, whose per-dataset sample order would not follow the ranks."""

    def __init__(self, low_level: Any, dataset_path: Optional[str],
                 indexed_indices: Optional[numpy.ndarray], num_samples: Optional[int],
                 index_split: Any, config: StokerGPTDatasetConfig) -> None:
        if indexed_indices is not None and len(indexed_indices) != 1:
            raise ValueError("stoker.integrations.megatron: stoker plans the whole dataset, so "
                             "it cannot be split by documents (split=...): give each split its "
                             "own datasets (blend_per_split)")
        super().__init__(low_level, dataset_path, indexed_indices, num_samples, index_split,
                         config)
        self._rows: Optional[_GlobalRows] = None
        rank, world = _dp_rank_and_size()
        self._loader = Loader(low_level, seq_len=config.sequence_length,
                              batch_size=config.micro_batch_size, rank=rank, world_size=world,
                              seed=config.random_seed, shuffle=config.shuffle, pack=config.pack,
                              num_workers=config.num_workers or None, output="torch")
        tok = getattr(config, "tokenizer", None)
        if tok is not None:
            check_tokenizer(self._loader, what="Megatron tokenizer",
                            vocab_size=getattr(tok, "vocab_size", None),
                            eos_id=getattr(tok, "eod", None))
        self._rows = _GlobalRows(self._loader, world, rank, config.micro_batch_size,
                                 config.packed_sequence)
        if num_samples is None:
            num_samples = self._loader.steps_per_epoch(0) * self._rows.global_rows
        self._num_samples = num_samples

    @staticmethod
    def numel_low_level_dataset(low_level_dataset: Any) -> int:
        return 1  # one plan: a split by documents is refused (see __init__)

    @staticmethod
    def build_low_level_dataset(dataset_path: str, config: StokerGPTDatasetConfig) -> Any:
        for blend in [config.blend] + list(config.blend_per_split or []):
            if blend is not None and len(blend[0]) > 1:
                raise ValueError(
                    "stoker.integrations.megatron: one stoker dataset or mixture file per blend "
                    f"(got {len(blend[0])} prefixes): Megatron's BlendedDataset would draw each "
                    "dataset's samples out of the ranks' order; put the weights in a stoker "
                    "mixture file (docs/plan.md, \"Schedules\") and name that")
        if dataset_path.endswith(".json"):
            from .._datasets import Mixture

            return Mixture(dataset_path)
        return dataset_path

    @staticmethod
    def _key_config_attributes() -> List[str]:
        return MegatronDataset._key_config_attributes() + ["micro_batch_size", "pack", "shuffle"]

    def __len__(self) -> int:
        return self._num_samples

    def __getitem__(self, idx: Optional[int]) -> Dict[str, torch.Tensor]:
        if idx is None:
            raise IndexError("stoker.integrations.megatron: padding samples (idx None) are not "
                             "produced; stoker's plan has none")
        row = self._rows.row(int(idx))
        return megatron_sample(row["input_ids"], row["labels"], row["position_ids"],
                               row.get("segment_ids"), self.config.create_attention_mask,
                               _packed_of(row))


class StokerMegatronIterator:
    """Micro-batches ``[micro_batch_size, S]`` in GPTDataset's keys, for Megatron's external
    data iterator. ``seek(consumed_samples)`` (the global samples Megatron's checkpoint
    records) positions it for any DP size; ``save_state()``/``load_state(state)`` also work.
    Not thread-safe."""

    def __init__(self, loader: Loader, attention_mask: bool = False,
                 packed_sequence: bool = True) -> None:
        if not isinstance(loader, Loader):
            raise TypeError("StokerMegatronIterator wraps a stoker.Loader")
        self.loader = loader
        self.attention_mask = attention_mask
        self._rows = _GlobalRows(loader, loader.world_size, loader.rank, loader.batch_size,
                                 packed_sequence)
        self._it: Optional[Iterator[Dict[str, Any]]] = None

    def seek(self, consumed_samples: int) -> None:
        """Continue after ``consumed_samples`` global samples (``args.consumed_train_samples``)."""
        if consumed_samples % self._rows.global_rows:
            raise ValueError(f"consumed_samples {consumed_samples} is not a multiple of the "
                             f"global micro batch ({self._rows.global_rows} rows)")
        self._rows.seek(consumed_samples)

    def __iter__(self) -> "StokerMegatronIterator":
        return self

    def __next__(self) -> Dict[str, torch.Tensor]:
        batch = self._rows.next_batch()
        return megatron_sample(batch["input_ids"], batch["labels"], batch["position_ids"],
                               batch.get("segment_ids"), self.attention_mask, _packed_of(batch))

    def save_state(self) -> Dict[str, Any]:
        return {"format": STATE_FORMAT, "states": global_states(self.loader)}

    def load_state(self, state: Dict[str, Any]) -> None:
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a {STATE_FORMAT} state")
        self.loader.load_state_dict(states_of(state.get("states"), STATE_FORMAT))
        self._rows.iterator = None

    state_dict = save_state
    load_state_dict = load_state
