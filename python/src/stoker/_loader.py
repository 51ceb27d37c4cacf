"""stoker.Loader: a DataLoader-shaped iterator over the C++ loader."""

from __future__ import annotations

import functools
import importlib.util
import json
import operator
import os
import sys
import time
import weakref
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

from . import _spelling, _stoker
from ._datasets import (DatasetSpec, Mixture, apply_mixture, rank_and_world_size,
                        resolve_datasets)

STATE_FORMAT = "stoker-loader-state"
STATE_VERSION = 1
RUN_RECORD_FORMAT = "stoker-run-record"
RUN_RECORD_VERSION = 1


def _run_record_options() -> Tuple[str, ...]:
    """The plan options a run record keeps (docs/lineage.md): every row of the plan's option table
    with a text form but the rank (a record is the run's, not one rank's), long_documents (how the
    documents are read), and the mixture's run_rows and dataset_names. `stoker trace --run` reads
    each back by its row (tools/stoker/run_record.cc)."""
    return tuple(r["name"] for r in _stoker.option_table("plan")
                 if r["default"] is not None and r["name"] != "rank") + (
        "long_documents", "run_rows", "dataset_names")


class Batch(dict):
    """One batch: ``{name: array}`` (torch tensors or NumPy arrays, nothing else, so
    ``{k: v.to(device) for k, v in batch.items()}`` works), with the step's figures as attributes
    (docs/loader.md, "What a batch holds"): ``epoch``, ``step``, ``real_tokens`` and
    ``trained_tokens`` (of this rank's batch), ``max_seqlen`` (the longest segment of
    ``cu_seqlens``, a Python int) and ``cu_seqlens_host`` (``cu_seqlens`` in host memory, also for a
    device batch: varlen attention reads both without a device-to-host sync) and
    ``cu_seqlens_padded_host`` (the same of ``cu_seqlens_padded`` with ``pad_each_document_to``,
    else None); ``state_after`` is
    the state dict that resumes right after this batch."""

    epoch: int
    step: int
    real_tokens: int
    trained_tokens: int
    max_seqlen: int
    cu_seqlens_host: Any
    cu_seqlens_padded_host: Any
    step_figures: Optional[Dict[str, Any]]

    @property
    def state_after(self) -> Dict[str, Any]:
        core = self.__dict__.get("_core")
        if core is None:
            raise AttributeError("this batch has no state (a synthetic loader's batch)")
        skips, drops = self.__dict__.get("_edits", ([], []))
        return _with_edits(make_state_dict(core.state_after_json()), skips, drops)

    @classmethod
    def of(cls, arrays: Dict[str, Any], core: "_stoker.Batch", output: str,
           planned: bool) -> "Batch":
        out = cls(arrays)
        out.epoch, out.step = core.epoch, core.step
        out.real_tokens, out.trained_tokens = core.real_tokens, core.trained_tokens
        out.max_seqlen = core.max_seqlen
        out.cu_seqlens_host = core.host_cu_seqlens(output)
        out.cu_seqlens_padded_host = core.host_cu_seqlens(output, padded=True)
        figures = core.step_figures
        out.step_figures = figures
        if figures is not None:  # steps counted in tokens (docs/plan.md, "Balanced steps")
            out.update(_figure_arrays(figures, output))
        if planned:
            out.__dict__["_core"] = core
        return out


def _figure_arrays(figures: Dict[str, Any], output: str) -> Dict[str, Any]:
    """A step's figures as 0-d arrays of the output framework, so that the batch stays a dict of
    arrays (``batch["global_trained_tokens"]`` moves to the device with the rest)."""
    import numpy as np
    arrays = {k: np.asarray(v, dtype=np.float64 if k == "step_imbalance" else np.int64)
              for k, v in figures.items()}
    if output == "torch":
        import torch
        return {k: torch.from_numpy(v) for k, v in arrays.items()}
    return arrays


def _torch_available() -> bool:
    """Whether torch can be imported, without importing it (output=None picks torch if so)."""
    if "torch" in sys.modules:
        return sys.modules["torch"] is not None
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _import_torch() -> Any:
    """torch, imported here and only for torch output (NumPy output never imports it)."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"stoker: output='torch' (and device batches) need torch, which is not "
                          f"importable ({e}); install torch or pass output='numpy'") from e
    return torch


def _device_index(device: Any) -> int:
    """None/"cpu" -> -1; "cuda", "cuda:N", torch.device, N -> a CUDA device index."""
    if device is None:
        return -1
    if isinstance(device, int) and not isinstance(device, bool):
        if device < 0:
            raise ValueError(f"device index must be >= 0, got {device}")
        return device
    name = str(device)
    if name == "cpu":
        return -1
    if name == "cuda":
        # Only code that imported torch can have moved torch's current device off 0.
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
        return 0
    if name.startswith("cuda:") and name[5:].isdigit():
        return int(name[5:])
    raise ValueError(f"device must be None, 'cpu', 'cuda' or 'cuda:N', not {device!r}")


def make_state_dict(plan_state_json: str) -> Dict[str, Any]:
    """The one checkpoint format of Loader.state_dict and Plan.state_dict (a plan state inside)."""
    return {"format": STATE_FORMAT, "version": STATE_VERSION,
            "plan_state": json.loads(plan_state_json)}


def plan_state_of(state: Any) -> Dict[str, Any]:
    """The plan state inside a state dict; ValueError if it is not one."""
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise ValueError(f"not a stoker loader state (format {STATE_FORMAT!r} expected)")
    if state.get("version") != STATE_VERSION:
        raise ValueError(f"unsupported stoker loader state version {state.get('version')!r} "
                         f"(this stoker reads version {STATE_VERSION})")
    plan_state = state.get("plan_state")
    if not isinstance(plan_state, dict):
        raise ValueError("stoker loader state has no 'plan_state' object")
    return plan_state


def _record_path(path: str) -> str:
    """A dataset's path as a run record keeps it: local paths made absolute."""
    return path if "://" in path else os.path.abspath(path)
def _skips_of(state: Any) -> list:
    """The skips (stoker.edit_state) of a state dict, or of the first of a list, in order."""
    first = state[0] if isinstance(state, (list, tuple)) and state else state
    plan_state = plan_state_of(first) if isinstance(first, dict) else {}
    skips = plan_state.get("skip") or []
    if not isinstance(skips, list) or not all(
            isinstance(s, dict) and {"epoch", "from", "to"} <= set(s) for s in skips):
        raise ValueError("the state's 'skip' list is malformed (write it with stoker.edit_state "
                         "or `stoker resume-edit`)")
    return sorted((dict(s) for s in skips), key=lambda s: (s["epoch"], s["from"]))


def _drops_of(state: Any) -> list:
    """The datasets a state (stoker.edit_state) leaves out, or of the first of a list."""
    first = state[0] if isinstance(state, (list, tuple)) and state else state
    drops = (plan_state_of(first) if isinstance(first, dict) else {}).get("drop") or []
    if not isinstance(drops, list) or not all(isinstance(d, str) for d in drops):
        raise ValueError("the state's 'drop' list is malformed (write it with stoker.edit_state "
                         "or `stoker resume-edit`)")
    return drops


def _with_edits(state: Dict[str, Any], skips: list, drops: list) -> Dict[str, Any]:
    """A state dict with the skips not reached yet and the datasets left out, so that a loader
    restoring it keeps them."""
    if skips:
        state["plan_state"]["skip"] = [dict(s) for s in skips]
    if drops:
        state["plan_state"]["drop"] = list(drops)
    return state


def edit_state(state: Dict[str, Any], skip_steps: Any = None,
               drop_source: Union[str, Sequence[str], None] = None,
               skip_documents: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """A checkpoint edited before a resume, as ``stoker resume-edit`` does (docs/plan.md,
    "Skipping steps on resume"). ``skip_steps=(first, last)`` (both included; or a list of such
    pairs): steps of the state's epoch, counted as the run that wrote it did (its world size and
    batch size). A Loader restoring the result serves every step before ``first``, never the
    skipped steps' rows, and the rest of the epoch once, on any world size. ``drop_source`` (a
    name, or a list) quarantines a mixture's dataset from the state on, as a mixture file without
    it would (the others continue their epochs exactly once). ``skip_documents`` (ids as
    ``stoker trace`` prints them, "DATASET:SHARD:RECORD") quarantines single documents: a Loader
    restoring the result never serves them, and every other document as planned. The input is
    not modified. ValueError for a range already passed, a stream's state, an unknown dataset, a
    malformed id or state."""
    if skip_steps is None and drop_source is None and skip_documents is None:
        raise ValueError("edit_state: nothing to edit (give skip_steps=(first, last), "
                         "drop_source=NAME or skip_documents=[IDS])")
    if skip_steps is None:
        ranges = []
    elif len(skip_steps) == 2 and all(isinstance(x, int) for x in skip_steps):
        ranges = [skip_steps]
    else:
        ranges = list(skip_steps)
    plan_state_of(state)  # a loader state dict, or ValueError
    text = json.dumps(state)
    for r in ranges:
        first, last = r
        for x in (first, last):
            if isinstance(x, bool) or not isinstance(x, int) or x < 0:
                raise ValueError(f"skip_steps: steps are integers >= 0, got {r!r}")
        text = _stoker.skip_steps_in_state(text, first, last)
    for name in [drop_source] if isinstance(drop_source, str) else (drop_source or []):
        text = _stoker.drop_source_in_state(text, name)
    if skip_documents is not None:
        if isinstance(skip_documents, str):
            raise ValueError("skip_documents: give a list of ids, not one string")
        text = _stoker.skip_documents_in_state(text, list(skip_documents))
    return json.loads(text)


# Loader's positional parameters after seed, before they became keyword-only.
_POSITIONAL_TAIL = ("rank", "world_size", "device", "output")


def _remainder(remainder: str, drop_last: Any) -> str:
    """The remainder policy: ``remainder`` ("drop_last" or "pad"), or the deprecated
    ``drop_last=True/False``."""
    if drop_last is _spelling._UNSET:
        return remainder
    old = "drop_last" if drop_last else "pad"
    if remainder != "drop_last" and remainder != old:
        raise ValueError("give remainder= only (drop_last= is its deprecated spelling)")
    _spelling.deprecated(f"drop_last={drop_last!r}", f"remainder={old!r}", stacklevel=4)
    return old


@functools.lru_cache(maxsize=None)
def option_defaults(table: str) -> Dict[str, Any]:
    """{python keyword: default} of a C++ options struct, from its option table (do not modify)."""
    return {row["python"]: row["default"] for row in _stoker.option_table(table)
            if row["python"] is not None}


@functools.lru_cache(maxsize=None)
def option_tuples(table: str) -> Dict[str, Tuple[Tuple[str, bool], ...]]:
    """{python keyword: ((field, optional), ...) by position} of the keywords that are tuples of
    several rows (``context_parallel=(cp_size, cp_rank)``), as the option table declares them
    (each row's ``python_part``; do not modify)."""
    parts: Dict[str, Dict[int, Tuple[str, bool]]] = {}
    for row in _stoker.option_table(table):
        if row["python_part"] is not None:
            keyword, index, optional = row["python_part"]
            parts.setdefault(keyword, {})[index] = (row["name"], optional)
    return {k: tuple(v[i] for i in sorted(v)) for k, v in parts.items()}


def _tuple_fields(table: str, keyword: str, value: Any) -> Dict[str, Any]:
    """{field: value} that the tuple keyword's value sets ({} for None: the fields' defaults);
    each value is then checked by its row as it is assigned."""
    if value is None:
        return {}
    parts = option_tuples(table)[keyword]
    try:  # NumPy integers too
        values = tuple(operator.index(v) if hasattr(v, "__index__") else v for v in value)
    except TypeError:
        values = ()
    if not sum(not optional for _, optional in parts) <= len(values) <= len(parts):
        shape = ", ".join(n for n, optional in parts if not optional) + "".join(
            f"[, {n}]" for n, optional in parts if optional)
        raise ValueError(f"{keyword} must be ({shape}), got {value!r}")
    return {name: v for (name, _), v in zip(parts, values)}


def _options(**kw: Any) -> "_stoker.LoaderOptions":
    for name in ("seq_len", "batch_size", "prefetch_factor"):
        value = kw[name]
        try:
            if isinstance(value, bool):
                raise TypeError
            kw[name] = operator.index(value)  # accepts NumPy integers too
        except TypeError:
            raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
        if kw[name] < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if kw["num_workers"] is None:
        kw["num_workers"] = 0  # the C++ default: cores / LOCAL_WORLD_SIZE
    if not isinstance(kw["num_workers"], int) or kw["num_workers"] < 0:
        raise ValueError(f"num_workers must be None or an integer >= 0, got {kw['num_workers']!r}")
    if "shuffle" in kw:
        kw["shuffle"] = _spelling.shuffle_name(kw["shuffle"])
    if kw.get("bestfit_window", 0) is None:
        kw["bestfit_window"] = option_defaults("plan")["bestfit_window"]  # the one default
    opts = _stoker.LoaderOptions()
    for name, value in kw.items():
        try:
            setattr(opts, name, value)
        except TypeError as e:
            raise ValueError(f"bad value for option {name}: {value!r} ({e})") from None
    return opts


class Loader:
    """Batches of packed rows from token datasets, in a deterministic, resumable order.

    Iterating runs one epoch; iterating again runs the next one. Batches are dicts of
    ``torch.Tensor`` (``output="torch"``, the default when torch is importable) or of
    ``numpy.ndarray`` (``output="numpy"``) with keys ``input_ids``, ``labels``, ``position_ids``,
    ``segment_ids`` (each unless turned off), ``cu_seqlens`` (and ``attention_mask`` when
    asked; with ``seq_idx=True`` also ``seq_idx``, int32 ``[B, S]``: each token's index among the
    batch's ``cu_seqlens`` segments, padding runs included, as Mamba and linear-attention varlen
    kernels take it). ``remainder`` is the last incomplete batch of an epoch: "drop_last" (the
    default) or "pad" (completed from the next epoch); ``drop_last=True/False`` is its deprecated
    spelling. ``rank``, ``world_size``, ``device`` and ``output`` are keyword arguments. Chat data (packed with a loss mask, docs/chat.md) also gives ``loss_mask``:
    ``labels[t] = input_ids[t+1]`` where token ``t+1`` is trained, else -100, and ``loss_mask``
    is 1 exactly where ``labels`` is not -100. ``long_documents`` says what becomes of a document
    longer than ``seq_len``: "auto" (the default) is "drop" for chat data (counted in
    ``stats()["long_documents_dropped"]``) and "split" for text; "truncate" keeps the head. The
    arrays point into the loader's ring without a copy; the ring slot is reused once
    every array of the batch is freed, so hold at most a few batches at a time.

    With ``provenance=True`` each batch also has ``batch["provenance"]``: a list with one entry
    per row, each a list of the row's pieces in order, each piece a dict with ``dataset`` (index
    among the datasets), ``source`` (its path; a stream: the input file), ``shard``,
    ``shard_path``, ``record`` (index within the shard), ``document`` (index within the dataset),
    ``key`` (the record's key, or None where the format has none), ``byte_offset`` (streams: the
    record's byte offset), ``offset`` and ``length`` (the tokens ``[offset, offset + length)`` of
    the document) and ``row_offset`` (where in the row they start). See docs/provenance.md.

    Remote datasets (``s3://``, ``http(s)://``) are read through a node-local disk cache:
    ``cache_dir="auto"`` (the default) is ``shards/`` in the cache root (``$STOKER_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/stoker``, else ``/tmp/stoker-cache-<uid>``; ``STOKER_CACHE_DIR=off``:
    no cache), any other path is the shard cache's own directory; ``cache_size`` its budget
    (default: 64 GiB or half the free disk); ``cache_dir=None`` turns it off. Local datasets
    never use it. See docs/cache.md.

    ``datasets`` may be a ``stoker.Mixture`` (a mixture file: named datasets whose weights change
    in phases over the run); ``total_tokens`` or ``total_steps`` give the run's length for phases
    that end at a share of it. See docs/plan.md, "Schedules".

    Not thread-safe: iterate from one thread. Every blocking call releases the GIL.
    """

    def __init__(
        self,
        datasets: Union[DatasetSpec, Sequence[DatasetSpec], Mixture, "Stream"],
        seq_len: int = 2048,
        batch_size: int = 8,
        num_workers: Optional[int] = None,
        pin_memory: bool = True,
        prefetch_factor: int = 2,
        persistent_workers: bool = True,
        drop_last: Any = _spelling._UNSET,
        shuffle: Union[str, bool] = "global",
        pack: str = "concat",
        seed: int = 0,
        *positional: Any,
        rank: Optional[int] = None,
        world_size: Optional[int] = None,
        device: Any = None,
        output: Optional[str] = None,
        remainder: str = "drop_last",
        token_dtype: str = "int64",
        cross_document_targets: bool = False,
        attention_mask: bool = False,
        position_ids: bool = True,
        segment_ids: bool = True,
        seq_idx: bool = False,
        pad_each_document_to: int = 0,
        max_documents_per_row: int = 0,
        context_parallel: Optional[Tuple[int, int]] = None,
        cp_layout: str = "zigzag",
        flex_block_mask: Optional[Tuple[Any, ...]] = None,
        on_error: str = "fail",
        pad_token_id: int = 0,
        long_documents: str = "auto",
        block_shards: int = 4,
        bestfit_window: Optional[int] = None,
        device_buffers: int = 2,
        monitor_warnings: bool = True,
        provenance: bool = False,
        cache_dir: Union[str, "os.PathLike[str]", None] = "auto",
        cache_size: Union[int, str, None] = None,
        total_tokens: Union[int, float, str, None] = None,
        total_steps: Optional[int] = None,
        metrics: Any = None,
        metrics_every: int = 100,
        tokens_per_step: int = 0,
        microbatches: int = 1,
        max_tokens_per_microbatch: int = 0,
        balance: str = "tokens",
        model: Union[str, "os.PathLike[str]"] = "",
    ) -> None:
        # Keyword arguments are the spelling (the defaults are LoaderOptions' own: a test checks
        # them against _stoker.option_table("loader")); rank, world_size, device and output by
        # position still work, with a warning.
        if positional:
            given = dict(zip(_POSITIONAL_TAIL, positional))
            if len(positional) > len(_POSITIONAL_TAIL):
                raise TypeError(f"stoker.Loader takes at most {11 + len(_POSITIONAL_TAIL)} "
                                "positional arguments")
            _spelling.deprecated(
                f"passing {', '.join(given)} to stoker.Loader by position",
                ", ".join(f"{k}=" for k in given) + " (by keyword)")
            keywords = {"rank": rank, "world_size": world_size, "device": device,
                        "output": output}
            for name in given:
                if keywords[name] is not None:
                    raise TypeError(f"stoker.Loader got multiple values for argument {name!r}")
            rank = given.get("rank", rank)
            world_size = given.get("world_size", world_size)
            device = given.get("device", device)
            output = given.get("output", output)
        remainder = _remainder(remainder, drop_last)
        from ._stream import Stream

        stream = datasets if isinstance(datasets, Stream) else None
        rank, world_size = rank_and_world_size(rank, world_size)
        specs, mixture = [], {"phases": []}
        if stream is None:
            # Steps counted in tokens: a mixture's phases count rows of the microbatch budget,
            # ⌈tokens_per_step / budget⌉ of them per step (docs/plan.md, "Balanced steps").
            row_len = (max_tokens_per_microbatch or seq_len) if tokens_per_step else seq_len
            step_rows = (-(-tokens_per_step // row_len) if tokens_per_step
                         else batch_size * world_size)
            specs, mixture = resolve_datasets(datasets, row_len, step_rows,
                                              total_tokens, total_steps)
        elif total_tokens is not None or total_steps is not None:
            raise ValueError("total_tokens and total_steps go with a stoker.Mixture")
        if stream is not None and metrics is not None:
            raise ValueError("metrics= needs datasets (a stoker.Stream has no per-source plan)")
        if stream is not None and stream.bestfit_window is not None:  # the deprecated spelling
            if bestfit_window not in (None, stream.bestfit_window):
                raise ValueError("bestfit_window given to both stoker.Stream (deprecated) and "
                                 "stoker.Loader: give it to the Loader only")
            bestfit_window = stream.bestfit_window
        # Keywords that are tuples of several rows (context_parallel, flex_block_mask): their
        # fields as the option table declares them. (A copy: the frame's own locals() dict would
        # hold itself as `keywords`, a cycle that keeps this Loader and its threads alive until
        # the cyclic GC runs instead of freeing them when the last reference goes.)
        keywords = dict(locals())
        tuples = {f: v for k in option_tuples("loader")
                  for f, v in _tuple_fields("loader", k, keywords[k]).items()}
        cp_size = tuples.get("cp_size", 1)
        model = os.fspath(model)  # steps counted in tokens (docs/plan.md, "Balanced steps")
        if isinstance(cp_size, int) and cp_size > 1 and pad_each_document_to in (0, 1):
            # Each document must split into equal chunks (TransformerEngine #1930): implied.
            pad_each_document_to = (2 if cp_layout == "zigzag" else 1) * cp_size
        self._setup(device, output)
        # Every keyword that is a row of the loader's option table goes to LoaderOptions as given
        # (the device as its index; the cache's two are read below).
        given = dict(locals(), device=self._device)
        self._options = _options(**{k: given[k] for k in option_defaults("loader")
                                    if k not in ("cache_dir", "cache_size")})
        for field, value in tuples.items():
            try:
                setattr(self._options, field, value)
            except TypeError as e:
                raise ValueError(str(e)) from None
        apply_mixture(self._options, mixture)
        cache_dir = _spelling.cache_dir(cache_dir, "cache_dir")
        if cache_size is not None and cache_dir is None:
            raise ValueError("cache_size needs a cache (cache_dir is None: no cache)")
        # Remote datasets go through a node-local cache, with look-ahead in plan order: "auto"
        # is shards/ in the cache root (cache/cache_defaults.h resolves it); None reads them by
        # ranged GETs. Local datasets never use it.
        self._options.cache_dir = "" if cache_dir is None else os.fspath(cache_dir)
        if cache_size is not None:  # "200GiB" or a byte count, read by the option's parser
            try:
                self._options.cache_size_bytes = cache_size
            except TypeError:
                raise ValueError(f"cache_size must be a size such as '200GiB' or a byte count, "
                                 f"got {cache_size!r}") from None
        self._datasets = specs
        self._provenance = bool(provenance)
        self._is_stream = stream is not None
        self._rank, self._world_size = rank, world_size
        if stream is not None:
            self._impl = _stoker.Loader.open_stream(stream.options, self._options)
        else:
            self._impl = _stoker.Loader.open(specs, self._options)
        self._synthetic_steps: Optional[int] = None
        # The run record (docs/lineage.md): every plan this run has used, from the run step it
        # started at, and the steps delivered so far.
        self._run_step = 0
        self._run_segments: list = []
        self._stream_options = stream.options if stream is not None else None
        self._start_segment(None if stream is not None else json.loads(self._impl.state_json()))
        self._token_steps = bool(tokens_per_step)
        self._metrics = self._accounting(metrics, metrics_every, specs, mixture, seq_len)

    def _accounting(self, metrics: Any, every: int, specs: list, mixture: Dict[str, Any],
                    seq_len: int) -> Any:
        """stoker.metrics' counter for Loader(metrics=...), or None. A pure-Python keyword, not an
        option-table row: the sink is a Python object and the counting runs in Python."""
        if metrics is None:
            return None
        from . import metrics as metrics_module

        names = mixture.get("dataset_names") or [
            os.path.basename(os.path.normpath(str(path))) or str(path) for path, _w in specs]
        names = [str(n).replace("/", "_") for n in names]
        names = [n if names.count(n) == 1 else f"{n}_{i}" for i, n in enumerate(names)]
        me = weakref.ref(self)  # the live core (load_state_dict may reopen it)
        self._metrics_last: Optional[tuple] = None  # where the last counted step started
        if self._token_steps:  # each batch is one microbatch: one row of the budget
            return metrics_module.Accounting(
                metrics_module.as_sink(metrics), every, names, self._rank, 1,
                self._options.max_tokens_per_microbatch or seq_len, self._world_size,
                lambda: me()._impl, step_of=lambda e, rows: me()._impl.token_step_index(e, rows))
        return metrics_module.Accounting(metrics_module.as_sink(metrics), every, names,
                                         self._rank, self._options.batch_size, seq_len,
                                         self._world_size, lambda: me()._impl)

    @classmethod
    def synthetic(
        cls,
        seq_len: int = 2048,
        batch_size: int = 8,
        seed: int = 0,
        device: Any = None,
        output: Optional[str] = None,
        pin_memory: bool = True,
        token_dtype: str = "int64",
        steps: Optional[int] = None,
    ) -> "Loader":
        """The "remove the data pipeline" experiment: one fixed batch served through the same API.

        Each iteration yields ``steps`` batches (forever when ``steps`` is None).
        """
        self = cls.__new__(cls)
        self._setup(device, output)
        self._options = _options(
            seq_len=seq_len, batch_size=batch_size, num_workers=1, prefetch_factor=1,
            pin_memory=pin_memory, seed=seed, device=self._device, token_dtype=token_dtype)
        self._datasets = []
        self._provenance = False
        self._metrics = None
        self._is_stream = False
        self._rank, self._world_size = 0, 1
        self._impl = _stoker.Loader.open_synthetic(self._options)
        self._run_step, self._run_segments = 0, []
        if steps is not None and (not isinstance(steps, int) or steps < 0):
            raise ValueError(f"steps must be None or an integer >= 0, got {steps!r}")
        self._synthetic_steps = steps
        return self

    def _setup(self, device: Any, output: Optional[str]) -> None:
        self._skips: list = []  # token steps: stoker.edit_state's skips not reached yet, in order
        self._token_steps = False  # steps counted in tokens (tokens_per_step > 0)
        self._loaded_skips: list = []  # every skip of the last load_state_dict (for len)
        self._drops: list = []  # the datasets stoker.edit_state(drop_source=...) left out
        self._moves = 0  # load_state_dict and set_epoch count here: positions known go stale
        self._end_pending = False  # the epoch's last batch was delivered, its end not yet seen
        self._device = _device_index(device)
        self._torch = None
        if output is None:  # torch when it imports, else NumPy
            if _torch_available():
                try:
                    self._torch = _import_torch()
                except ImportError:
                    pass
            output = "torch" if self._torch is not None else "numpy"
        if output not in ("torch", "numpy"):
            raise ValueError(f"output must be 'torch' or 'numpy', not {output!r}")
        if self._device >= 0 and output != "torch":
            raise ValueError("device batches need output='torch'")
        if output == "torch" and self._torch is None:
            self._torch = _import_torch()
        self._output = output

    # -- iteration -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Batch]:
        impl = self._impl
        if self._synthetic_steps is not None:
            for _ in range(self._synthetic_steps):
                yield self._convert(impl.next())
            return
        if self._end_pending:
            # The last iteration stopped right after an epoch's last batch: step over that end.
            self._end_pending = False
            if impl.next() is not None:
                raise RuntimeError("stoker: expected the end of an epoch")
        metrics = self._metrics
        start, moves = None, -1
        # Steps skipped (stoker.edit_state): the C++ planner jumps over them (and pads a step of
        # another world that reaches into one); the run record starts a segment past each jump.
        record_jumps = bool(self._loaded_skips and self._run_segments and not self._token_steps)
        planned = None  # where the plan without skips goes after the last batch
        while True:
            # The step the next batch starts at, for its provenance and metrics: the last batch's
            # position_after (free), unless the loader was moved since (load_state_dict...).
            position = None
            if self._provenance or metrics is not None or self._skips or record_jumps:
                if start is None or moves != self._moves:
                    start, moves, planned = self._position(), self._moves, None
                position = start
                if self._skips:  # steps counted in tokens
                    epoch = position[0]
                    position = start = self._skip_token_steps(position)
                    moves = self._moves
                    if position[0] > epoch:  # skipped to the epoch's end: this iteration's end
                        return
                elif planned is not None and position != planned:
                    self._start_segment(json.loads(self._impl.state_json()))
            try:
                if metrics is not None:
                    began = time.perf_counter()
                    batch = impl.next()
                    metrics.waits.append(time.perf_counter() - began)
                else:
                    batch = impl.next()
            except ValueError as e:
                if "ring slot" not in str(e):
                    raise
                raise ValueError(f"{e} (from Python: a batch holds its slot while any of its "
                                 "tensors is alive; .clone() the batches you keep)") from None
            if batch is None:
                if metrics is not None:
                    metrics.waits.pop()  # the end of the epoch is no step
                self._end_pending = False
                return
            self._end_pending = batch.ends_epoch
            out = self._convert(batch)
            self._run_step += 1
            if self._provenance:
                out["provenance"] = self._explain(position, batch)
            if position is not None:
                start = batch.position_after
                if record_jumps:
                    planned = self._plain_advance(position)
            if self._skips or self._drops:
                out.__dict__["_edits"] = (list(self._skips), self._drops)
            if metrics is not None:
                self._metrics_last = position
                if len(metrics.waits) >= metrics.every:
                    metrics.flush(position)
            yield out

    def _plain_advance(self, position: tuple) -> tuple:
        """Where the plan without skips goes after the step at `position` (Plan::Advance)."""
        epoch, rows = position
        rows += self._options.batch_size * self._world_size
        return (epoch, rows) if self._impl.steps_remaining(epoch, rows, '{"skip": []}') else (
            epoch + 1, 0)

    def _jump_past_skip(self, to: tuple) -> tuple:
        """Steps counted in tokens: restore at `to` (epoch, rows), the first position past the
        first skip, and drop it."""
        self._impl.restore(self._impl.make_state_json(*to))
        self._skips.pop(0)
        self._end_pending = False
        self._moves += 1
        if self._run_segments:  # the run record goes on from past the skip
            self._start_segment(json.loads(self._impl.state_json()))
        return self._position()

    def _skip_token_steps(self, position: tuple) -> tuple:
        """Where the next step counted in tokens starts, after the skips it reaches: a skip names
        whole token steps by their index in the epoch (the same windows at every world size), so
        no step is ever cut; the step that would start in one starts at its end instead."""
        while self._skips:
            skip = self._skips[0]
            epoch, rows = position
            index = self._impl.token_step_index(epoch, rows)
            if (epoch, index) >= (skip["epoch"], skip["to"]):
                self._skips.pop(0)  # passed (a later checkpoint, or set_epoch)
                continue
            if epoch < skip["epoch"] or index < skip["from"]:
                break
            to = self._impl.token_step_start(skip["epoch"], skip["to"])
            position = self._jump_past_skip(to)
        return position

    def _convert(self, batch: "_stoker.Batch") -> Batch:
        return Batch.of(self._arrays(batch), batch, self._output,
                        planned=bool(self._datasets) or self._is_stream)

    def _arrays(self, batch: "_stoker.Batch") -> Dict[str, Any]:
        if self._device < 0:
            return batch.arrays(self._output)
        torch = self._torch
        if batch.on_device:
            # Ready on the current stream: the stream waits on the GPU for this batch's copy only.
            batch.wait_on_stream(torch.cuda.current_stream(self._device).cuda_stream)
            return batch.arrays("torch", device=True)
        # Built without the CUDA copier: copy from the ring here.
        device = torch.device("cuda", self._device)
        return {k: v.to(device, non_blocking=True) for k, v in batch.arrays("torch").items()}

    def _explain(self, position: tuple[int, int], batch: "_stoker.Batch") -> list:
        step = json.loads(self._impl.provenance_json(*position))
        if (step["epoch"], step["step"]) != (batch.epoch, batch.step):
            raise RuntimeError(f"stoker: provenance of epoch {step['epoch']} step {step['step']} "
                               f"does not belong to batch {batch.epoch}/{batch.step}")
        return [row["pieces"] for row in step["rows"]]

    def __len__(self) -> int:
        """Steps of the whole epoch the next iteration runs, counted from its first step
        (identical on every rank), also after a resume in the middle of it: the steps the next
        iteration will still yield are ``steps_remaining()``. Steps that a skip edit of the
        restored state leaves out (``stoker.edit_state``) are not counted."""
        if not self._impl.has_plan:
            if self._synthetic_steps is None:
                raise TypeError("a synthetic loader without steps has no length")
            return self._synthetic_steps
        return self.steps_per_epoch(self.epoch)

    def steps_remaining(self) -> int:
        """Steps the next iteration yields from where the loader stands: ``len(loader)`` less
        the steps of its epoch already taken (after a resume, or a ``break``) and less the
        steps skip edits still ahead leave out."""
        if not self._impl.has_plan:
            return len(self)
        epoch, rows = self._position()
        # Skips of rows: the planner's own (C++); of token steps: those not reached yet.
        return self._impl.steps_remaining(epoch, rows, json.dumps({"skip": self._skips})
                                          if self._skips else "")

    @property
    def epoch(self) -> int:
        """The epoch the next batch belongs to."""
        return self._position()[0]

    def _position(self) -> tuple[int, int]:
        state = json.loads(self._impl.state_json())
        return state["epoch"], state["rows_consumed"]

    def set_epoch(self, epoch: int) -> None:
        """Moves to the start of ``epoch``, unless the loader is already inside it.

        Calling it every epoch, as with torch's DistributedSampler, is harmless: a loader resumed
        mid-epoch by load_state_dict() stays where it is. Without it, each iteration simply runs
        the next epoch.
        """
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be an integer >= 0, got {epoch!r}")
        if self.epoch == epoch:
            return
        self._impl.restore(self._impl.make_state_json(epoch, 0))
        self._end_pending = False
        if self._run_segments:
            self._start_segment(json.loads(self._impl.state_json()))
        self._moves += 1

    # -- checkpoints ---------------------------------------------------------------------------

    def state_dict(self, run_record: bool = False) -> Dict[str, Any]:
        """The position after the last delivered batch: a small JSON-serialisable dict.

        ``run_record=True`` adds ``"run_record"``: ``run_record()``, what ``stoker trace --run``
        and ``stoker summary --run`` read (docs/lineage.md); a ``load_state_dict`` of such a state
        continues the record.

        Datasets: the same on every rank; restoring it with another world size or batch size
        continues the same global order (elastic resume). A ``stoker.Stream``: each rank's own
        (its shards' positions, shuffle buffer and packer, as references); save every rank's
        (``stoker.gather_state_dicts``) to resume on another world size.
        """
        state = _with_edits(make_state_dict(self._impl.state_json()), self._skips, self._drops)
        if run_record and self._run_segments:
            state["run_record"] = self.run_record()
        return state

    # -- the run record (docs/lineage.md) ------------------------------------------------------

    def run_record(self) -> Optional[Dict[str, Any]]:
        """What this run trained on, for ``stoker trace`` and ``stoker summary``: a small
        JSON-serialisable dict (``{"format": "stoker-run-record", ...}``) naming every plan the run
        used (fingerprint, datasets, options, mixture schedule) with the run step it started at
        and the checkpoint it resumed from (a world-size change, a mixture edit), and ``step``,
        the steps delivered so far. ``state_dict(run_record=True)`` carries it as
        ``"run_record"``; a ``load_state_dict`` of such a state continues it (a state without it
        starts a new record). A ``stoker.Stream``'s record names its inputs and options instead
        of datasets (the same on every rank: ``stoker trace`` replays every rank's stream). None
        for a synthetic loader (not recorded)."""
        if not self._run_segments:
            return None
        return self._run_record(self._run_step)

    def _run_record(self, step: int) -> Dict[str, Any]:
        return {"format": RUN_RECORD_FORMAT, "version": RUN_RECORD_VERSION, "step": step,
                "segments": [s for s in self._run_segments if s["step"] <= step]}

    def _start_segment(self, resume: Optional[Dict[str, Any]], elastic: bool = False) -> None:
        """From the current run step on, this loader's plan, continued from ``resume``."""
        o = self._options
        if self._is_stream:  # the stream's inputs and options (python/src/stoker/_stream_record.py)
            from ._stream_record import stream_record, stream_resume

            self._add_segment({"step": self._run_step, "fingerprint": self.fingerprint,
                               "stream": stream_record(self._stream_options, o.on_error),
                               "options": {k: getattr(o, k) for k in _run_record_options()
                                           if k not in ("run_rows", "dataset_names")},
                               "resume": stream_resume(resume, elastic)})
            return
        names = list(o.dataset_names) or [_record_path(path) for path, _ in self._datasets]
        # A mixture's state names each dataset's identity (its cursor's id: 16 hex digits over
        # its document count, lengths and shard boundaries); one dataset's is in the fingerprint.
        cursors = json.loads(self._impl.state_json()).get("datasets") or []
        segment = {
            "step": self._run_step,
            "fingerprint": self.fingerprint,
            "datasets": [{"name": name, "path": _record_path(path), "weight": weight}
                         | ({"id": cursors[k]["id"]} if k < len(cursors) else {})
                         for k, (name, (path, weight)) in enumerate(zip(names, self._datasets))],
            "options": {k: (list(v) if k == "dataset_names" else v)
                        for k, v in ((k, getattr(o, k)) for k in _run_record_options())},
            "phases": [{"end_row": p.end_row, "weights": list(p.weights),
                        "end_weights": list(p.end_weights)} for p in o.phases],
            "resume": resume,
        }
        self._add_segment(segment)

    def _add_segment(self, segment: Dict[str, Any]) -> None:
        # A segment that starts where the last one did replaces it (set_epoch at the start).
        if self._run_segments and self._run_segments[-1]["step"] == self._run_step:
            self._run_segments.pop()
        self._run_segments.append(segment)

    def load_state_dict(self, state: Union[Dict[str, Any], Sequence[Dict[str, Any]]]) -> None:
        """Continues from ``state``; ValueError if it is malformed or from another plan.

        ``state`` may also be the list of every rank's ``state_dict()``, in rank order (as
        ``stoker.gather_state_dicts`` returns it). For a ``stoker.Stream`` that is what a resume on
        another world size needs: each new rank takes its share of the epoch's unread documents,
        with the same number of steps on every rank, and the next epoch is this world's own
        (docs/streaming.md, "Elastic resume"). On the same world size the list's own entry is
        restored (bitwise the same batches).
        """
        skips = _skips_of(state)
        elastic = False  # a stream's resume on another world size (its run record says so)
        if isinstance(state, (list, tuple)):
            plans = [plan_state_of(s) for s in state]
            if not plans:
                raise ValueError("load_state_dict: an empty list of states")
            same_world = (len(plans) == self._world_size
                          and all(p.get("world_size") == self._world_size for p in plans))
            if not self._is_stream:
                resume = json.dumps(plans[0])  # a plan's state is the same on every rank
            elif same_world:
                resume = json.dumps(plans[self._rank])
            else:
                resume = self._impl.elastic_state_json([json.dumps(p) for p in plans])
                elastic = True
        else:
            plan_state = plan_state_of(state)
            if (self._is_stream and plan_state.get("world_size") not in (None, 0, self._world_size)
                    and plan_state.get("stream")):
                raise ValueError(
                    f"this stream state was written on {plan_state.get('world_size')} ranks and "
                    f"this loader has {self._world_size}: pass the list of every old rank's "
                    "state_dict() (stoker.gather_state_dicts) for an elastic resume")
            resume = json.dumps(plan_state)
        drops = _drops_of(state)
        # Documents quarantined (stoker.edit_state(skip_documents=...)): the C++ loader opened at
        # the state leaves them out, so a change of them reopens it.
        reopen = drops != self._drops or (bool(self._datasets) and not self._is_stream and (
            json.loads(resume).get("skip_documents") or []) != (
            json.loads(self._impl.state_json()).get("skip_documents") or []))
        if drops != self._drops:
            self._drop_sources(drops)
        if reopen or (not self._is_stream and len(self._datasets) > 1
                      and json.loads(resume).get("fingerprint") != self.fingerprint):
            # An edited mixture (docs/plan.md, "Edits on resume"): the loader reopens on the plan
            # that continues each dataset where the checkpoint says it stopped.
            impl = _stoker.Loader.open(self._datasets, self._options, resume_json=resume)
            self._impl.close()
            self._impl = impl
        else:
            self._impl.restore(resume)
        self._end_pending = False
        if self._run_segments:
            first = state[0] if isinstance(state, (list, tuple)) else state
            record = first.get("run_record") if isinstance(first, dict) else None
            if isinstance(record, dict) and record.get("format") == RUN_RECORD_FORMAT:
                self._run_step = int(record.get("step", 0))
                self._run_segments = list(record.get("segments", []))
            else:  # a checkpoint without a record: the record starts here
                self._run_step, self._run_segments = 0, []
            resumed = json.loads(resume)
            if skips and not self._token_steps and not self._is_stream:
                # Restored inside a skip: the planner starts at its end, and so does the record.
                now = json.loads(self._impl.state_json())
                if (now["epoch"], now["rows_consumed"]) != (resumed["epoch"],
                                                            resumed["rows_consumed"]):
                    resumed = now
            self._start_segment(resumed, elastic)
        self._moves += 1
        # Skips of global rows live in the C++ planner (it serves none of their rows and writes
        # them into its states); Python walks only those of steps counted in tokens.
        self._skips = skips if self._token_steps else []
        self._loaded_skips = list(skips)

    def _drop_sources(self, drops: list) -> None:
        """Leaves the datasets named ``drops`` (stoker.edit_state(drop_source=...)) out of this
        loader's plan, as a mixture file without them would: the resume that follows continues
        the others where the state says they stopped (docs/plan.md, "Edits on resume")."""
        if self._drops:
            raise ValueError(f"this loader already left out {self._drops}: build a new loader "
                             "to restore a state that drops other datasets")
        names = list(self._options.dataset_names) or [
            p if "://" in str(p) else os.path.abspath(str(p)) for p, _w in self._datasets]
        unknown = [n for n in drops if n not in names]
        if unknown:
            raise ValueError(f"the state drops {unknown}, which this loader does not have (its "
                             f"datasets: {', '.join(names)})")
        keep = [k for k, n in enumerate(names) if n not in drops]
        phases = []
        for i, phase in enumerate(self._options.phases):
            phase.weights = [phase.weights[k] for k in keep]
            if phase.end_weights:
                phase.end_weights = [phase.end_weights[k] for k in keep]
            if not any(w > 0 for w in list(phase.weights) + list(phase.end_weights)):
                raise ValueError(f"dropping {drops} leaves phase {i} of the mixture with no "
                                 "weight: edit the mixture file instead")
            phases.append(phase)
        self._options.phases = phases
        if self._options.dataset_names:
            self._options.dataset_names = [names[k] for k in keep]
        self._datasets = [self._datasets[k] for k in keep]
        if self._metrics is not None:
            self._metrics.names = [self._metrics.names[k] for k in keep]
        self._drops = list(drops)

    # -- monitoring and lifetime ---------------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """Live counters: batches, tokens/s, the consumer's wait (data stall), ring occupancy...

        The ``monitor_*`` keys are the live stall monitor over its sliding window (the last 30 s
        of batches): ``monitor_stall_share``, ``monitor_consumed_tokens_per_s``,
        ``monitor_deliverable_tokens_per_s``, ``monitor_ratio`` (deliverable / consumed; below
        1.2 the GPU will wait), ``monitor_batches``, and ``monitor_warnings`` /
        ``monitor_warned`` (it warns on stderr at most once per 5 minutes).
        """
        return self._impl.stats()

    @property
    def num_workers(self) -> int:
        return self._impl.num_workers

    # -- what the loader was built with (for adapters: stoker.integrations) --------------------

    @property
    def rank(self) -> int:
        """This loader's data-parallel rank (given, or torchrun's ``RANK``)."""
        return self._rank

    @property
    def world_size(self) -> int:
        """The data-parallel size its batches are split for."""
        return self._world_size

    @property
    def seq_len(self) -> int:
        return self._options.seq_len

    @property
    def batch_size(self) -> int:
        """Rows per rank per step (a global batch is ``batch_size * world_size`` rows)."""
        return self._options.batch_size

    @property
    def datasets(self) -> list:
        """``[(path, weight), ...]``: the datasets as the plan reads them (a mixture's resolved
        paths and weights); empty for a stream or a synthetic loader."""
        return list(self._datasets)

    @property
    def is_stream(self) -> bool:
        """Whether it reads a ``stoker.Stream`` (a per-rank state: ``gather_state_dicts``)."""
        return self._is_stream

    @property
    def options(self) -> Dict[str, Any]:
        """``{keyword: value}`` of every option the loader runs with, by ``stoker.Loader``'s
        keyword names (a copy: changing it changes nothing). ``num_workers`` 0 means the
        default; the ``num_workers`` property is the number of threads it runs."""
        out = {}
        for name in option_defaults("loader"):
            value = getattr(self._options, "cache_size_bytes" if name == "cache_size" else name)
            out[name] = value
        return out

    def steps_per_epoch(self, epoch: Optional[int] = None) -> int:
        """Steps (global batches) of epoch ``epoch`` (default: ``self.epoch``) at this world
        size, less the steps a skip edit of the restored state leaves out; ``len(loader)`` is
        ``steps_per_epoch()``."""
        if epoch is None:
            return len(self)
        if not isinstance(epoch, int) or epoch < 0:
            raise ValueError(f"epoch must be an integer >= 0, got {epoch!r}")
        if not self._impl.has_plan:
            return len(self)
        if self._loaded_skips:
            return self._impl.steps_remaining(epoch, 0, json.dumps({"skip": self._loaded_skips}))
        return self._impl.steps_per_epoch(epoch)

    def state_dict_at(self, epoch: int, step: int) -> Dict[str, Any]:
        """The state (``state_dict()``'s format) that resumes at step ``step`` of epoch ``epoch``,
        after ``step`` global batches of it: ``load_state_dict(loader.state_dict_at(e, s))`` seeks
        there, with no batch read. The state right after a batch the loop holds is
        ``batch.state_after``. A stream has no such state (its position is its readers'):
        ValueError."""
        for name, value in (("epoch", epoch), ("step", step)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
        if self._is_stream or not self._impl.has_plan:
            raise ValueError("state_dict_at: a stream's or a synthetic loader's position is not "
                             "a step number; save state_dict() or batch.state_after instead")
        rows = step * self._options.batch_size * self._world_size
        return make_state_dict(self._impl.make_state_json(epoch, rows))

    @property
    def fingerprint(self) -> str:
        """The plan's fingerprint (datasets, weights, seq_len, seed, shuffle, pack)."""
        return self._impl.fingerprint

    def close(self) -> None:
        """Stops the worker threads (and flushes and closes the metrics sink, if any). Tensors
        already delivered stay valid."""
        if self._metrics is not None:
            self._metrics.flush(self._metrics_last)
            close = getattr(self._metrics.sink, "close", None)
            if close is not None:
                close()
            self._metrics = None
        self._impl.close()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
