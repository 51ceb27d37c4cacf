"""stoker.Stream: raw text read as a stream (JSONL, .gz, .zst, text files, record shards:
WebDataset, TFRecord, MDS), for stoker.Loader."""

from __future__ import annotations

import glob
import os
import sys
from typing import Any, Optional, Sequence, Union

from . import _spelling
from ._tokenizer import template_kwargs_json, tokenizer_options


class Stream:
    """Raw text inputs streamed through a shuffle buffer and tokenized online (docs/streaming.md).

    ``paths`` are files, directories or glob patterns (expanded here, sorted; record shards on
    ``s3://`` and ``http(s)://`` are listed by stoker, docs/formats.md). Give the object to
    ``stoker.Loader`` in place of datasets; the loader options (seq_len, batch_size, num_workers,
    pack, bestfit_window, seed, rank/world_size, on_error, state_dict) mean what they mean for
    datasets. The loader options a stream cannot honour are refused with a ValueError, never
    ignored: ``shuffle`` other than "global"/True (a stream's order is its seeded shard dealing
    and its shuffle buffer), ``block_shards``, and ``remainder="pad"``. The kernel metadata are
    the datasets' (host ``cu_seqlens``, ``max_seqlen``, ``seq_idx``, ``flex_block_mask``), and
    ``pad_each_document_to``, ``max_documents_per_row`` (pack "bestfit" or "pad") and
    ``context_parallel`` are honoured: the stream's packer counts the padding and the cap, and
    the loader's ``rank``/``world_size`` are the data-parallel ones, so every CP rank of a DP rank
    reads the same stream and keeps its own share.
    ``steps_per_epoch`` fixes the epoch length; without it a pre-scan at open reads every shard
    once. ``tokenizer``: "bytes", a SentencePiece ``.model``, a ``tokenizer.json`` or a
    ``.tiktoken`` file (then ``pattern`` names its split: r50k, p50k, cl100k, o200k, llama3, llama4 or a regex;
    ``special``, ``allow_special``, ``eos`` as for ``stoker.Tokenizer``). ``text_field`` is the
    JSONL field or the record shards' field holding the text. ``scan_cache``: where the pre-scans
    written by ``stoker scan`` are looked up ("auto": the default cache directory, None: none,
    or a directory; scans beside the data are read too). ``bestfit_window`` here is a deprecated
    spelling of the loader's ``bestfit_window`` (one default, 4096, for datasets and streams).

    Chat records (docs/chat.md): with ``tokenizer`` a model directory (tokenizer.json and
    tokenizer_config.json with its chat template), records whose first one is a conversation
    (``messages``, ``conversations``, ``prompt`` + ``completion``) are rendered by the template
    and encoded with their loss mask, exactly as ``stoker pack`` encodes them; ``train_on``,
    ``chat_template`` (a template file) and ``chat_field`` are pack's options of those names (any
    of them also turns chat on). The batches then have ``labels`` (-100 where the next token is
    not trained) and ``loss_mask``; use ``pack="bestfit"`` or "pad" (conversations longer than
    seq_len are left out, never split). Plain value.
    """

    def __init__(
        self,
        paths: Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]],
        tokenizer: str = "bytes",
        text_field: str = "text",
        shuffle_buffer: int = 10_000,
        *,
        utf8: str = "replace",
        bestfit_window: Any = _spelling._UNSET,
        steps_per_epoch: Optional[int] = None,
        split_factor: int = 8,
        pattern: Optional[str] = None,
        special: Optional[str] = None,
        allow_special: bool = False,
        eos: Optional[Union[str, int]] = None,
        post_processor: bool = True,
        scan_cache: Union[str, os.PathLike, None] = "auto",
        train_on: str = "",
        chat_template: Union[str, os.PathLike, None] = None,
        chat_field: str = "",
        chat_template_kwargs: Optional[dict] = None,
    ) -> None:
        inputs = []
        for p in _spelling.paths(paths):
            if glob.has_magic(p) and not p.startswith(("s3://", "http://", "https://")):
                matched = sorted(glob.glob(p))
                if not matched:
                    raise FileNotFoundError(f"stoker.Stream: no file matches {p!r}")
                inputs.extend(matched)
            else:
                inputs.append(p)
        if not inputs:
            raise ValueError("stoker.Stream: no input given")
        if bestfit_window is _spelling._UNSET:
            bestfit_window = None
        else:
            _spelling.deprecated("stoker.Stream(bestfit_window=)",
                                "stoker.Loader(stream, bestfit_window=)")
            if not isinstance(bestfit_window, int) or bestfit_window < 1:
                raise ValueError(f"bestfit_window must be an integer >= 1, got {bestfit_window!r}")
        for name, v in (("shuffle_buffer", shuffle_buffer), ("split_factor", split_factor)):
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if steps_per_epoch is not None and (not isinstance(steps_per_epoch, int)
                                            or steps_per_epoch < 1):
            raise ValueError(f"steps_per_epoch must be None or an integer >= 1, got "
                             f"{steps_per_epoch!r}")
        from . import _stoker

        # The one definition: the C++ StreamOptions, filled here and handed over whole.
        o = _stoker.StreamOptions()
        try:
            o.utf8 = utf8
        except ValueError as e:
            raise ValueError(f"utf8: {e}") from None
        scan = _spelling.cache_dir(scan_cache, "scan_cache")
        self.options = _spelling.fill(
            o, inputs=inputs, tokenizer=os.fspath(tokenizer),
            tokenizer_options=tokenizer_options(pattern, special, allow_special, eos,
                                                post_processor),
            text_field=text_field, shuffle_buffer=shuffle_buffer,
            steps_per_epoch=steps_per_epoch or 0, split_factor=split_factor,
            scan_cache_dir="" if scan is None else scan, train_on=train_on,
            chat_template="" if chat_template is None else os.fspath(chat_template),
            chat_field=chat_field,
            chat_template_kwargs=template_kwargs_json(chat_template_kwargs))
        self.bestfit_window: Optional[int] = bestfit_window  # deprecated; None: the loader's

    @property
    def inputs(self) -> list:
        return self.options.inputs

    @property
    def tokenizer(self) -> str:
        return self.options.tokenizer

    @property
    def shuffle_buffer(self) -> int:
        return self.options.shuffle_buffer

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
