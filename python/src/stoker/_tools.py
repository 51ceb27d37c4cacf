"""stoker.pack / inspect / verify / plan: the command line's operations as functions."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _spelling, _stoker
from ._datasets import (DatasetSpec, Mixture, PathLike, apply_mixture, rank_and_world_size,
                        resolve_datasets)
from ._tokenizer import template_kwargs_json, tokenizer_options


def pack(
    inputs: Union[PathLike, Sequence[PathLike]],
    output: PathLike,
    tokenizer: str = "bytes",
    *,
    text_field: str = "text",
    shard_size: Union[str, int] = "128MiB",
    num_workers: int = 0,
    task_index: Optional[int] = None,
    task_count: Optional[int] = None,
    utf8: str = "replace",
    on_error: str = "fail",
    dtype: str = "auto",
    overwrite: bool = False,
    pattern: Optional[str] = None,
    special: Optional[str] = None,
    allow_special: bool = False,
    eos: Optional[Union[str, int]] = None,
    post_processor: bool = True,
    input_format: str = "auto",
    key_field: str = "",
    format: str = "stoker",
    train_on: str = "",
    chat_template: Optional[PathLike] = None,
    chat_field: str = "",
    chat_template_kwargs: Optional[Dict[str, Any]] = None,
    threads: Any = _spelling._UNSET,
    bad_lines: Any = _spelling._UNSET,
) -> Dict[str, Any]:
    """Tokenizes raw text (JSONL, .gz/.zst, text files, directories) into a stoker dataset.

    Same options and defaults as ``stoker pack``; num_workers=0 uses every core (tokenizer
    threads). ``on_error`` ("fail" or "skip") is what to do with bad lines and records.
    ``threads`` and ``bad_lines`` are their deprecated spellings. Returns the dataset's
    manifest and the run's counters. Raises FileNotFoundError for a missing input,
    FileExistsError when a dataset is already there (unless overwrite), ValueError for bad options
    or input, OSError for read/write failures. Record shards (WebDataset, TFRecord, MDS, LitData,
    Parquet, Arrow / save_to_disk) are read by name or by ``input_format``; ``text_field`` names the
    field with the text or the token ids, ``key_field`` the field that names a record in errors.

    Byte-level BPE tokenizers (``tokenizer.json``, ``.tiktoken``) take the options of
    ``stoker.Tokenizer`` and ``stoker pack``: ``pattern`` (tiktoken files: r50k, p50k, cl100k,
    o200k, llama3, llama4 or a regex), ``special`` ("NAME=ID,..."), ``allow_special``, ``eos`` (token text or id)
    and ``post_processor``.

    ``format`` picks the output, as ``stoker pack --format``: "stoker" (token shards),
    "tfrecord" (token shards plus ``output/tfrecord/part-NNNNNN.tfrecord``, one tf.train.Example
    ``input_ids`` per document) or "webdataset" (the input files themselves grouped by key into
    ``output/shard-NNNNNN.tar``; no tokenization, so the result has no ``manifest``). Record
    outputs are written atomically with a ``records.json`` manifest (files, bytes, XXH3), and
    the result's ``records`` holds their counts.

    Chat data (docs/chat.md): JSONL records with ``messages``, ``conversations`` or ``prompt`` +
    ``completion`` are packed as conversations when ``tokenizer`` is a model directory with a chat
    template, or when ``train_on`` ("assistant", "last", "completion", "all") or
    ``chat_template`` (a template file) or ``chat_field`` (the field holding the conversation;
    default: detected) is given; the loss mask is written beside the tokens.
    ``chat_template_kwargs`` (a dict such as ``{"enable_thinking": False}``) are extra template
    variables, as transformers' ``apply_chat_template(**kwargs)`` takes them.
    """
    num_workers = _spelling.alias(num_workers, threads, "threads", "num_workers", 0)
    on_error = _spelling.alias(on_error, bad_lines, "bad_lines", "on_error", "fail")
    args = _spelling.fill(
        _stoker.PackArgs(), inputs=_spelling.paths(inputs), output=os.fspath(output),
        tokenizer=tokenizer, text_field=text_field, shard_size=str(shard_size),
        num_workers=num_workers, task_index=task_index, task_count=task_count, utf8=utf8,
        on_error=on_error, dtype=dtype, overwrite=overwrite, input_format=input_format,
        key_field=key_field, format=format, train_on=train_on,
        chat_template=os.fspath(chat_template) if chat_template is not None else "",
        chat_field=chat_field, chat_template_kwargs=template_kwargs_json(chat_template_kwargs),
        tokenizer_options=tokenizer_options(pattern, special, allow_special, eos, post_processor))
    result = _stoker.pack(args)
    if "manifest_json" in result:
        result["manifest"] = json.loads(result.pop("manifest_json"))
    return result


def inspect(path: PathLike, document: Optional[int] = None) -> Any:
    """The summary of ``stoker inspect --json`` as a dict, or with ``document`` its token ids
    (a list); for chat data (a dataset with a loss mask) ``document`` gives a dict with
    ``tokens``, ``loss_mask`` (1 where the token is trained) and ``trained_tokens``."""
    if document is not None:
        return json.loads(_stoker.document_json(os.fspath(path), document))
    return json.loads(_stoker.inspect_json(os.fspath(path)))


def verify(path: PathLike) -> Dict[str, Any]:
    """Checks token data end to end like ``stoker verify``.

    Returns {"ok", "problems", "documents", "tokens", ...}: problems found in the data are listed,
    not raised; an unreadable or unknown ``path`` raises.
    """
    return _stoker.verify(os.fspath(path))


def _rank_by_position(where: str, positional: tuple, rank: Optional[int]) -> Optional[int]:
    """``rank`` given by position (deprecated: it is a keyword argument), else the keyword's."""
    if not positional:
        return rank
    if len(positional) > 1 or rank is not None:
        raise TypeError(f"{where}: give rank= once, by keyword")
    _spelling.deprecated(f"{where}(..., rank) by position", f"{where}(..., rank=)", stacklevel=4)
    return positional[0]


class Plan:
    """The deterministic plan: which rows every rank trains on at every step. Thread-safe."""

    def __init__(self, impl: "_stoker.Plan", datasets: List[tuple]) -> None:
        self._impl = impl
        self.datasets = datasets

    @property
    def fingerprint(self) -> str:
        return self._impl.fingerprint

    @property
    def global_batch_rows(self) -> int:
        return self._impl.global_batch_rows

    def rows_in_epoch(self, epoch: int = 0) -> int:
        return self._impl.rows_in_epoch(epoch)

    def steps_per_epoch(self, epoch: int = 0) -> int:
        return self._impl.steps_per_epoch(epoch)

    def batch(self, epoch: int, step: int, *positional: Any,
              rank: Optional[int] = None) -> Dict[str, Any]:
        """One rank's rows for one step, as ``stoker plan --json`` prints them: rows are lists of
        (dataset, document, offset, length) pieces. ``rank`` by keyword (default: the plan's)."""
        rank = _rank_by_position("Plan.batch", positional, rank)
        return self._impl.batch(epoch, step, rank)

    def batches(self, epoch: int = 0, *positional: Any,
                rank: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Every step of ``epoch`` for ``rank`` (by keyword; default: the plan's rank)."""
        rank = _rank_by_position("Plan.batches", positional, rank)
        for step in range(self.steps_per_epoch(epoch)):
            yield self._impl.batch(epoch, step, rank)

    def phase_at(self, epoch: int, rows_consumed: int = 0) -> int:
        """The mixture phase (index into the mixture file's phases) of a position; 0 without."""
        return self._impl.phase_at(epoch, rows_consumed)

    def dataset_rows_before(self, epoch: int, rows_consumed: int = 0) -> List[int]:
        """Rows each dataset gave to the global rows before a position (its own stream's
        position: its epoch 0's rows, then epoch 1's, ...)."""
        return self._impl.dataset_rows_before(epoch, rows_consumed)

    def dataset_epochs(self, epoch: int, rows_consumed: int = 0) -> List[float]:
        """Each dataset's epochs consumed before a position (fractional)."""
        return self._impl.dataset_epochs(epoch, rows_consumed)

    def stats(self, epoch: int = 0) -> Dict[str, Any]:
        """Packing figures of ``epoch`` (real-token share, padding, documents split...)."""
        return {"epoch": epoch, "fingerprint": self.fingerprint,
                "rows": self.rows_in_epoch(epoch), "steps": self.steps_per_epoch(epoch),
                "global_batch_rows": self.global_batch_rows,
                "packing": self._impl.packing_stats(epoch)}

    def state_dict(self, epoch: int, rows_consumed: int = 0) -> Dict[str, Any]:
        """The checkpoint for a position, in the format of ``Loader.state_dict()`` (so either
        loads into the other; docs/checkpoint-format.md)."""
        from ._loader import make_state_dict

        return make_state_dict(self._impl.make_state_json(epoch, rows_consumed))

    def restore(self, state: Dict[str, Any], force: bool = False) -> tuple:
        """(epoch, rows_consumed) where a checkpoint (``state_dict()`` of a Plan or a Loader)
        resumes: its position, moved past the skipped steps (``stoker.edit_state(skip_steps=)``,
        ``stoker resume-edit --skip-steps``) that the position reaches, as the Loader moves past
        them (a skip further ahead is the caller's to jump when it gets there; quarantined
        documents are left out by the Loader, not by ``Plan.batch``). ValueError if it is from
        another plan, or if it drops a dataset this plan still has. A bare plan state (the ``plan_state`` inside, as
        ``Plan.state_dict`` returned before) is still read, with a DeprecationWarning."""
        from ._loader import plan_state_of

        if isinstance(state, dict) and state.get("format") == "stoker-plan-state":
            _spelling.deprecated("a bare plan state", "Plan.state_dict()'s format (as the Loader's)")
            return self._impl.restore(json.dumps(state), force)
        return self._impl.restore(json.dumps(plan_state_of(state)), force)


def plan(
    datasets: Union[DatasetSpec, Sequence[DatasetSpec], Mixture],
    seq_len: int,
    batch_size: int,
    *,
    rank: Optional[int] = None,
    world_size: Optional[int] = None,
    seed: int = 0,
    shuffle: Union[str, bool] = "global",
    pack: str = "concat",
    remainder: str = "drop_last",
    drop_last: Any = _spelling._UNSET,
    block_shards: int = 4,
    bestfit_window: Optional[int] = None,
    pad_each_document_to: int = 0,
    max_documents_per_row: int = 0,
    total_tokens: Union[int, float, str, None] = None,
    total_steps: Optional[int] = None,
    long_documents: str = "auto",
    tokens_per_step: int = 0,
    microbatches: int = 1,
    max_tokens_per_microbatch: int = 0,
    balance: str = "tokens",
    model: str = "",
) -> Plan:
    """Builds the plan ``stoker plan`` prints (same options; RANK/WORLD_SIZE are the defaults).

    ``datasets`` may be a ``stoker.Mixture``; ``total_tokens`` / ``total_steps`` give the run's
    length for its phases that end at a share of it (docs/plan.md, "Schedules").
    ``long_documents`` is the loader's (chat data drops conversations longer than seq_len by
    default), so the plan is the loader's. ``remainder``: "drop_last" or "pad" (``drop_last=`` is
    its deprecated spelling)."""
    from ._loader import _options, _remainder

    if tokens_per_step:  # the plan's rows: steps counted in tokens are the loader's (and the CLI's)
        raise ValueError("stoker.plan plans steps of rows: for steps counted in tokens use "
                         "stoker.Loader(..., tokens_per_step=...) or `stoker plan "
                         "--tokens-per-step` (docs/plan.md, \"Balanced steps\")")

    remainder = _remainder(remainder, drop_last)
    rank, world_size = rank_and_world_size(rank, world_size)
    specs, mixture = resolve_datasets(datasets, seq_len, batch_size * world_size, total_tokens,
                                      total_steps)
    if mixture.get("tokens_per_step_schedule"):
        raise ValueError(f"{datasets.path}: its \"tokens_per_step\" batch-size schedule needs "
                         "steps counted in tokens, which stoker.plan does not plan: use "
                         "stoker.Loader(stoker.Mixture(...), tokens_per_step=...) or `stoker plan "
                         "--mixture FILE --tokens-per-step N` (docs/plan.md, \"Balanced steps\")")
    opts = _options(seq_len=seq_len, batch_size=batch_size, prefetch_factor=1, num_workers=None,
                    world_size=world_size, rank=rank, seed=seed, shuffle=shuffle, pack=pack,
                    remainder=remainder, block_shards=block_shards,
                    bestfit_window=bestfit_window, long_documents=long_documents,
                    pad_each_document_to=pad_each_document_to,
                    max_documents_per_row=max_documents_per_row)
    apply_mixture(opts, mixture)
    impl = _stoker.Plan.create(specs, opts)
    if mixture["phases"]:
        # The datasets' own weights are unused (1 each): give each one's share of the rows of
        # epoch 0 (the run when its length is given), the basis of `stoker plan --stats`.
        rows = impl.rows_in_epoch(0)
        shares = [r / rows for r in impl.dataset_rows_before(1, 0)]
        specs = [(path, share) for (path, _), share in zip(specs, shares)]
    return Plan(impl, specs)
