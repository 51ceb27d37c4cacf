"""stoker.Loader: a DataLoader-shaped iterator over the C++ loader."""

from __future__ import annotations

import functools
import importlib.util
import json
import operator
import os
import sys
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

from . import _spelling, _stoker
from ._datasets import (DatasetSpec, Mixture, apply_mixture, rank_and_world_size,
                        resolve_datasets)

STATE_FORMAT = "stoker-loader-state"
STATE_VERSION = 1

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

    @property
    def state_after(self) -> Dict[str, Any]:
        core = self.__dict__.get("_core")
        if core is None:
            raise AttributeError("this batch has no state (a synthetic loader's batch)")
        return make_state_dict(core.state_after_json())

    @classmethod
    def of(cls, arrays: Dict[str, Any], core: "_stoker.Batch", output: str,
           planned: bool) -> "Batch":
        out = cls(arrays)
        out.epoch, out.step = core.epoch, core.step
        out.real_tokens, out.trained_tokens = core.real_tokens, core.trained_tokens
        out.max_seqlen = core.max_seqlen
        out.cu_seqlens_host = core.host_cu_seqlens(output)
        out.cu_seqlens_padded_host = core.host_cu_seqlens(output, padded=True)
        if planned:
            out.__dict__["_core"] = core
        return out


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


def _context_parallel(value: Any) -> Tuple[int, int]:
    """(cp_size, cp_rank) from context_parallel=None or a pair of integers."""
    if value is None:
        return 1, 0
    try:
        size, rank = (operator.index(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError("context_parallel must be (cp_size, cp_rank), two integers, got "
                         f"{value!r}") from None
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"context_parallel=({size}, {rank}): cp_size must be at least 1 and "
                         "cp_rank in [0, cp_size)")
    return size, rank


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
            specs, mixture = resolve_datasets(datasets, seq_len, batch_size * world_size,
                                              total_tokens, total_steps)
        elif total_tokens is not None or total_steps is not None:
            raise ValueError("total_tokens and total_steps go with a stoker.Mixture")
        if stream is not None and stream.bestfit_window is not None:  # the deprecated spelling
            if bestfit_window not in (None, stream.bestfit_window):
                raise ValueError("bestfit_window given to both stoker.Stream (deprecated) and "
                                 "stoker.Loader: give it to the Loader only")
            bestfit_window = stream.bestfit_window
        cp_size, cp_rank = _context_parallel(context_parallel)
        if cp_size > 1 and pad_each_document_to in (0, 1):
            # Each document must split into equal chunks (TransformerEngine #1930): implied.
            pad_each_document_to = (2 if cp_layout == "zigzag" else 1) * cp_size
        self._setup(device, output)
        # Every keyword that is a row of the loader's option table goes to LoaderOptions as given
        # (the device as its index; the cache's two are read below).
        given = dict(locals(), device=self._device)
        self._options = _options(**{k: given[k] for k in option_defaults("loader")
                                    if k not in ("cache_dir", "cache_size")})
        self._options.cp_size, self._options.cp_rank = cp_size, cp_rank
        if flex_block_mask is not None:
            spec = tuple(flex_block_mask)
            if len(spec) not in (2, 3):
                raise ValueError("flex_block_mask must be (block_size, kind) or (block_size, "
                                 f"'sliding_window', window), got {flex_block_mask!r}")
            self._options.flex_block_size, self._options.flex_mask_kind = spec[0], spec[1]
            self._options.flex_window = spec[2] if len(spec) == 3 else 0
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
        self._is_stream = False
        self._rank, self._world_size = 0, 1
        self._impl = _stoker.Loader.open_synthetic(self._options)
        if steps is not None and (not isinstance(steps, int) or steps < 0):
            raise ValueError(f"steps must be None or an integer >= 0, got {steps!r}")
        self._synthetic_steps = steps
        return self

    def _setup(self, device: Any, output: Optional[str]) -> None:
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
        while True:
            # The step the next batch starts at, for its provenance.
            position = self._position() if self._provenance else None
            try:
                batch = impl.next()
            except ValueError as e:
                if "ring slot" not in str(e):
                    raise
                raise ValueError(f"{e} (from Python: a batch holds its slot while any of its "
                                 "tensors is alive; .clone() the batches you keep)") from None
            if batch is None:
                self._end_pending = False
                return
            self._end_pending = batch.ends_epoch
            out = self._convert(batch)
            if position is not None:
                out["provenance"] = self._explain(position, batch)
            yield out

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
        iteration will still yield are ``steps_remaining()``."""
        if not self._impl.has_plan:
            if self._synthetic_steps is None:
                raise TypeError("a synthetic loader without steps has no length")
            return self._synthetic_steps
        return self._impl.steps_per_epoch(self.epoch)

    def steps_remaining(self) -> int:
        """Steps the next iteration yields from where the loader stands: ``len(loader)`` less
        the steps of its epoch already taken (after a resume, or a ``break``)."""
        if not self._impl.has_plan:
            return len(self)
        epoch, rows = self._position()
        return self._impl.steps_remaining(epoch, rows)

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

    # -- checkpoints ---------------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """The position after the last delivered batch: a small JSON-serialisable dict.

        Datasets: the same on every rank; restoring it with another world size or batch size
        continues the same global order (elastic resume). A ``stoker.Stream``: each rank's own
        (its shards' positions, shuffle buffer and packer, as references); save every rank's
        (``stoker.gather_state_dicts``) to resume on another world size.
        """
        return make_state_dict(self._impl.state_json())

    def load_state_dict(self, state: Union[Dict[str, Any], Sequence[Dict[str, Any]]]) -> None:
        """Continues from ``state``; ValueError if it is malformed or from another plan.

        ``state`` may also be the list of every rank's ``state_dict()``, in rank order (as
        ``stoker.gather_state_dicts`` returns it). For a ``stoker.Stream`` that is what a resume on
        another world size needs: each new rank takes its share of the epoch's unread documents,
        with the same number of steps on every rank, and the next epoch is this world's own
        (docs/streaming.md, "Elastic resume"). On the same world size the list's own entry is
        restored (bitwise the same batches).
        """
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
        else:
            plan_state = plan_state_of(state)
            if (self._is_stream and plan_state.get("world_size") not in (None, 0, self._world_size)
                    and plan_state.get("stream")):
                raise ValueError(
                    f"this stream state was written on {plan_state.get('world_size')} ranks and "
                    f"this loader has {self._world_size}: pass the list of every old rank's "
                    "state_dict() (stoker.gather_state_dicts) for an elastic resume")
            resume = json.dumps(plan_state)
        if (not self._is_stream and len(self._datasets) > 1
                and json.loads(resume).get("fingerprint") != self.fingerprint):
            # An edited mixture (docs/plan.md, "Edits on resume"): the loader reopens on the plan
            # that continues each dataset where the checkpoint says it stopped.
            impl = _stoker.Loader.open(self._datasets, self._options, resume_json=resume)
            self._impl.close()
            self._impl = impl
        else:
            self._impl.restore(resume)
        self._end_pending = False

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

    @property
    def fingerprint(self) -> str:
        """The plan's fingerprint (datasets, weights, seq_len, seed, shuffle, pack)."""
        return self._impl.fingerprint

    def close(self) -> None:
        """Stops the worker threads. Tensors already delivered stay valid."""
        self._impl.close()

    def __enter__(self) -> "Loader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
