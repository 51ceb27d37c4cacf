"""stoker.metrics: live, exact per-source accounting of what the loader served, and sinks for it.

``stoker.Loader(..., metrics=sink, metrics_every=N)`` counts every step this rank is served from
the plan itself (the pieces of each step, as ``provenance=True`` gives them: nothing is sampled)
and every ``N`` steps hands ``sink.write(step, metrics)`` a flat ``{name: number}`` dict of the
window's figures (docs/metrics.md has the names). Sinks: :class:`Callback` (any function; what
the framework adapters use), :class:`TensorBoard`, :class:`WandB` and :class:`Prometheus`. Each
of the last three imports its library when it is built, never before: ``import stoker`` imports
none of them.

A sink is any object with ``write(step, metrics)`` (and optionally ``close()``); a plain function
``f(step, metrics)`` is accepted too.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

PREFIX = "stoker"


class Sink:
    """The metrics interface: ``write`` gets the step the window ended at (the last step counted)
    and the window's ``{name: number}``; ``close`` flushes. Not thread-safe: the loader calls it
    from its iterating thread."""

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class Callback(Sink):
    """Calls ``fn(step, metrics)`` for each window: the plain sink a trainer logs through
    (``stoker.integrations.hf`` and ``.lightning`` pass the figures to the trainer's own logger
    with it)."""

    def __init__(self, fn: Callable[[int, Dict[str, float]], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"stoker.metrics.Callback needs a function, got {fn!r}")
        self.fn = fn

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        self.fn(step, metrics)


class Latest(Sink):
    """Keeps the windows not yet taken: a trainer adapter takes them with ``pop()`` when it logs
    (``stoker.integrations.hf``'s callback merges them into the Trainer's logs; Lightning's
    ``StokerMetricsCallback`` hands them to ``trainer.loggers``)."""

    def __init__(self) -> None:
        self.pending: List[tuple] = []

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        self.pending.append((step, metrics))

    def pop(self) -> List[tuple]:
        """The ``(step, metrics)`` windows written since the last pop, oldest first."""
        out, self.pending = self.pending, []
        return out


def sinks_of(loader: Any, kind: type) -> List[Any]:
    """The sinks of type ``kind`` that ``loader`` (a stoker.Loader) writes to."""
    accounting = getattr(loader, "_metrics", None)
    if accounting is None:
        return []
    sink = accounting.sink
    found = sink.sinks if isinstance(sink, Sinks) else [sink]
    return [s for s in found if isinstance(s, kind)]


def _need(module: str, package: str, sink: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"stoker.metrics.{sink} needs {package} ({e}); install it "
                          f"(pip install {package}) or use stoker.metrics.Callback") from e


class TensorBoard(Sink):
    """Scalars in TensorBoard event files under ``logdir`` (tensorboard's own writer; torch is not
    needed). Tags are the metric names (``stoker/tokens/web``...)."""

    def __init__(self, logdir: "str | os.PathLike[str]", flush_secs: float = 10.0) -> None:
        writer = _need("tensorboard.summary.writer.event_file_writer", "tensorboard",
                       "TensorBoard")
        self._event = _need("tensorboard.compat.proto.event_pb2", "tensorboard", "TensorBoard")
        self._summary = _need("tensorboard.compat.proto.summary_pb2", "tensorboard",
                              "TensorBoard")
        self.logdir = os.fspath(logdir)
        self._writer = writer.EventFileWriter(self.logdir, flush_secs=flush_secs)

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        Summary = self._summary.Summary
        values = [Summary.Value(tag=k, simple_value=float(v)) for k, v in metrics.items()]
        self._writer.add_event(self._event.Event(wall_time=time.time(), step=int(step),
                                                 summary=Summary(value=values)))

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()


class WandB(Sink):
    """Logs to a Weights & Biases run: ``run`` if given, else ``wandb.init(**init_kwargs)``
    (``mode="offline"`` writes the run to its directory only; ``wandb sync`` uploads it later).
    The run is finished on ``close()`` when this sink started it."""

    def __init__(self, run: Any = None, **init_kwargs: Any) -> None:
        wandb = _need("wandb", "wandb", "WandB")
        self._own = run is None
        self.run = wandb.init(**init_kwargs) if run is None else run

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        self.run.log(dict(metrics), step=int(step))

    def close(self) -> None:
        if self._own:
            self.run.finish()


class Prometheus(Sink):
    """Serves the latest window's figures as gauges on ``http://addr:port/metrics`` (port 0: a free
    port, then ``self.port``). Names: the metric names with ``/`` as ``_`` and the source as a
    label (``stoker/tokens/web`` is ``stoker_source_tokens{source="web",rank="0"}``)."""

    def __init__(self, port: int = 0, addr: str = "127.0.0.1", registry: Any = None) -> None:
        prom = _need("prometheus_client", "prometheus-client", "Prometheus")
        self._prom = prom
        self.registry = prom.CollectorRegistry() if registry is None else registry
        self._gauges: Dict[str, Any] = {}
        self._server, _thread = prom.start_http_server(port, addr=addr, registry=self.registry)
        self.port = self._server.server_port

    def _gauge(self, name: str, labels: Sequence[str]) -> Any:
        gauge = self._gauges.get(name)
        if gauge is None:
            gauge = self._prom.Gauge(name, f"stoker loader metric {name}", list(labels),
                                     registry=self.registry)
            self._gauges[name] = gauge
        return gauge

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        rank = str(int(metrics.get(f"{PREFIX}/rank", 0)))
        for key, value in metrics.items():
            parts = key.split("/")
            if len(parts) == 3:  # stoker/tokens/<source>: stoker_source_tokens{source=...}
                name = f"{parts[0]}_source_{parts[1]}"
                self._gauge(name, ("source", "rank")).labels(parts[2], rank).set(value)
            else:
                self._gauge("_".join(parts), ("rank",)).labels(rank).set(value)
        self._gauge(f"{PREFIX}_step", ("rank",)).labels(rank).set(step)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Sinks(Sink):
    """Several sinks fed the same windows (``Loader(metrics=[a, b])`` builds one)."""

    def __init__(self, sinks: Sequence[Any]) -> None:
        self.sinks = [as_sink(s) for s in sinks]

    def write(self, step: int, metrics: Dict[str, float]) -> None:
        for sink in self.sinks:
            sink.write(step, dict(metrics))

    def close(self) -> None:
        for sink in self.sinks:
            close = getattr(sink, "close", None)
            if close is not None:
                close()


def as_sink(metrics: Any) -> Optional[Sink]:
    """A sink from what Loader(metrics=...) was given: None, a Sink-like object, a function, or a
    list of those."""
    if isinstance(metrics, (list, tuple)):
        return Sinks(metrics)
    if metrics is None or hasattr(metrics, "write"):
        return metrics
    if callable(metrics):
        return Callback(metrics)
    raise TypeError(f"metrics must be a stoker.metrics sink (an object with write(step, "
                    f"metrics)) or a function f(step, metrics), not {metrics!r}")


class Accounting:
    """The per-source counts of one loader's steps (stoker.Loader drives it). Per step it keeps
    only the consumer's wait; the counts are summed in C++ as batches are delivered
    (``SourceCount``, built by the workers beside the tensors) and read once per window. Not
    thread-safe: confined to the iterating thread."""

    def __init__(self, sink: Sink, every: int, names: List[str], rank: int, batch_size: int,
                 seq_len: int, world_size: int, core: Callable[[], Any],
                 step_of: Optional[Callable[[int, int], int]] = None) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"metrics_every must be a positive integer, got {every!r}")
        self.sink, self.every, self.names, self.rank = sink, every, names, rank
        self.positions = batch_size * seq_len  # of this rank's batch
        self.rows_per_step = batch_size * world_size  # global rows of a step
        self._core = core  # the loader's live _stoker.Loader (load_state_dict may replace it)
        # The step number of a position (steps counted in tokens: the token step's index).
        self._step_of = step_of or (lambda epoch, rows: rows // self.rows_per_step)
        impl = core()
        self._was = (impl, impl.source_totals(), self._storage_now(impl))
        self.waits: List[float] = []

    @staticmethod
    def _storage_now(impl: Any) -> Dict[str, float]:
        storage = impl.stats().get("storage", {})
        return {"hits": storage.get("cache_hits", 0),
                "gets": storage.get("requests", {}).get("GET", 0),
                "retries": storage.get("retries", 0)}

    def flush(self, last: Optional[tuple]) -> None:
        """Writes the window counted so far (if any) to the sink and starts the next: ``last`` is
        the (epoch, rows_consumed) its last step started at."""
        if not self.waits or last is None:
            return
        epoch, step = last[0], self._step_of(*last)
        impl = self._core()
        totals, storage = impl.source_totals(), self._storage_now(impl)
        was_impl, was_totals, was_storage = self._was
        if was_impl is not impl:  # reopened on an edited mixture: its counters start at zero
            was_totals, was_storage = [], dict.fromkeys(storage, 0)
        self._was = (impl, totals, storage)
        p = PREFIX
        steps = len(self.waits)
        out: Dict[str, float] = {f"{p}/rank": self.rank, f"{p}/epoch": epoch, f"{p}/steps": steps}
        real = trained = 0
        for i, name in enumerate(self.names):
            now = totals[i] if i < len(totals) else (0, 0, 0, 0)
            before = was_totals[i] if i < len(was_totals) else (0, 0, 0, 0)
            d = [a - b for a, b in zip(now, before)]
            out[f"{p}/tokens/{name}"], out[f"{p}/trained_tokens/{name}"] = d[0], d[1]
            out[f"{p}/documents/{name}"], out[f"{p}/pieces/{name}"] = d[2], d[3]
            real, trained = real + d[0], trained + d[1]
        out[f"{p}/tokens"], out[f"{p}/trained_tokens"] = real, trained
        out[f"{p}/padding_tokens"] = steps * self.positions - real
        # Each source's own epoch, and the schedule's phase, at the window's last step.
        phase, epochs = -1, {}
        for _row, ds, _at, _n, _off, ds_epoch, ph in impl.step_pieces(*last):
            epochs[ds] = max(epochs.get(ds, 0), epoch if ds_epoch < 0 else ds_epoch)
            phase = max(phase, ph)
        for ds, e in sorted(epochs.items()):
            out[f"{p}/dataset_epoch/{self.names[ds]}"] = e
        if phase >= 0:
            out[f"{p}/phase"] = phase
        waits = sorted(self.waits)  # nearest-rank percentiles
        out[f"{p}/data_wait_ms_p50"] = waits[math.ceil(0.50 * len(waits)) - 1] * 1e3
        out[f"{p}/data_wait_ms_p99"] = waits[math.ceil(0.99 * len(waits)) - 1] * 1e3
        hits = storage["hits"] - was_storage["hits"]
        gets = storage["gets"] - was_storage["gets"]
        if hits + gets > 0:
            out[f"{p}/cache_hit_rate"] = hits / (hits + gets)
        out[f"{p}/storage_retries"] = storage["retries"] - was_storage["retries"]
        self.waits = []
        self.sink.write(step, out)
