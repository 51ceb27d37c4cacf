"""stoker.Stream: raw text read as a stream (JSONL, .gz, .zst, text files, record shards:
WebDataset, TFRecord, MDS), for stoker.Loader."""

from __future__ import annotations

import glob
import os
import sys
from typing import Optional, Sequence, Union


class Stream:
    """Raw text inputs streamed through a shuffle buffer and tokenized online (docs/streaming.md).

    ``paths`` are files, directories or glob patterns (expanded here, sorted; record shards on
    ``s3://`` and ``http(s)://`` are listed by stoker, docs/formats.md). Give the object to
    ``stoker.Loader`` in place of datasets; the loader options (seq_len, batch_size, num_workers,
    pack, seed, rank/world_size, on_error, state_dict) mean what they mean for datasets.
    ``steps_per_epoch`` fixes the epoch length; without it a pre-scan at open reads every shard
    once. ``tokenizer``: "bytes", a SentencePiece ``.model``, a ``tokenizer.json`` or a
    ``.tiktoken`` file (then ``pattern`` names its split: r50k, p50k, cl100k, o200k, llama3, llama4 or a regex;
    ``special``, ``allow_special``, ``eos`` as for ``stoker.Tokenizer``). ``text_field`` is the
    JSONL field or the record shards' field holding the text. ``scan_cache``: where the pre-scans
    written by ``stoker index --stream`` are looked up ("auto": the default cache directory,
    "off", or a directory; scans beside the data are read too). Plain value.
    """

    def __init__(
        self,
        paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
        tokenizer: str = "bytes",
        text_field: str = "text",
        shuffle_buffer: int = 10_000,
        *,
        utf8: str = "replace",
        bestfit_window: int = 256,
        steps_per_epoch: Optional[int] = None,
        split_factor: int = 8,
        pattern: Optional[str] = None,
        special: Optional[str] = None,
        allow_special: bool = False,
        eos: Optional[Union[str, int]] = None,
        scan_cache: Union[str, os.PathLike] = "auto",
    ) -> None:
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        inputs = []
        for p in paths:
            p = os.fspath(p)
            if glob.has_magic(p) and not p.startswith(("s3://", "http://", "https://")):
                matched = sorted(glob.glob(p))
                if not matched:
                    raise FileNotFoundError(f"stoker.Stream: no file matches {p!r}")
                inputs.extend(matched)
            else:
                inputs.append(p)
        if not inputs:
            raise ValueError("stoker.Stream: no input given")
        for name, v in (("shuffle_buffer", shuffle_buffer), ("bestfit_window", bestfit_window),
                        ("split_factor", split_factor)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if steps_per_epoch is not None and (not isinstance(steps_per_epoch, int)
                                            or steps_per_epoch < 1):
            raise ValueError(f"steps_per_epoch must be None or an integer >= 1, got "
                             f"{steps_per_epoch!r}")
        self.inputs = inputs
        self.tokenizer = os.fspath(tokenizer)
        self.text_field = text_field
        self.shuffle_buffer = shuffle_buffer
        self.utf8 = utf8
        self.bestfit_window = bestfit_window
        self.steps_per_epoch = steps_per_epoch or 0
        self.split_factor = split_factor
        self.tokenizer_options = (pattern or "", special or "", bool(allow_special),
                                  "" if eos is None else str(eos))
        self.scan_cache = os.fspath(scan_cache)

    def _open(self, core, options, resume_json=None):
        return core.Loader.open_stream(
            self.inputs, self.tokenizer, self.text_field, self.shuffle_buffer, self.utf8,
            self.bestfit_window, self.steps_per_epoch, self.split_factor, options, resume_json,
            *self.tokenizer_options, self.scan_cache)

    def __repr__(self) -> str:
        return (f"stoker.Stream({self.inputs!r}, tokenizer={self.tokenizer!r}, "
                f"shuffle_buffer={self.shuffle_buffer})")


def gather_state_dicts(loader, group=None) -> list:
    """Every rank's ``loader.state_dict()``, in rank order: the checkpoint an elastic resume needs.

    A collective (``torch.distributed.all_gather_object``): call it on every rank after the same
    step. Save the list once (for example from rank 0) and give it to ``load_state_dict`` on every
    rank of the new world, whatever its size. Without an initialised process group the loader is
    alone: the list holds its own state.
    """
    state = loader.state_dict()
    if "torch" not in sys.modules:
        return [state]  # no torch imported: no process group can be initialised
    try:
        import torch.distributed as dist
    except ImportError:
        return [state]
    if not dist.is_available() or not dist.is_initialized():
        return [state]
    out = [None] * dist.get_world_size(group)
    dist.all_gather_object(out, state, group=group)
    return out
