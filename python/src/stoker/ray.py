"""stoker.ray.pack: a task-split pack (docs/pack.md, "Many machines") run as Ray tasks.

Ray is an optional dependency: ``import stoker`` never imports it; this module imports it when
``pack`` is called. Each Ray task is one ``stoker pack --task-index I --task-count N`` into the
shared output: it runs stoker's own workers with the GIL released, declares its CPUs to Ray
(``num_cpus``), is retried when its worker dies (``max_retries``), and writes its receipt last, so
a retried or rerun task either finds its receipt and does nothing or redoes its shards. When every
task is done the driver merges (``stoker.merge``) and returns the manifest.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _spelling
from ._datasets import PathLike


def _attempt_marker(output: str, index: int) -> Optional[str]:
    """A file that exists while task ``index`` runs and is removed when it ends, so that the next
    attempt of a task whose worker died finds it (local or shared outputs; None for s3://)."""
    if "://" in output:
        return None
    return os.path.join(output, "tasks", f".running-{index:05d}")


def _pack_task(inputs: List[str], output: str, tokenizer: str, index: int, count: int,
               num_workers: int, overwrite: bool, options: Dict[str, Any]) -> Dict[str, Any]:
    import stoker  # in the worker

    started = time.monotonic()
    marker = _attempt_marker(output, index)
    retry = False
    if marker is not None:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        retry = os.path.exists(marker)  # an earlier attempt died before its end
        with open(marker, "w"):
            pass
    result = stoker.pack(inputs, output, tokenizer, task_index=index, task_count=count,
                         num_workers=num_workers, overwrite=overwrite, **options)
    if marker is not None:
        os.remove(marker)
    manifest = result.get("manifest") or {}
    shards = manifest.get("shards", [])
    return {
        "task": index,
        "skipped": bool(result.get("skipped", False)),
        "retry": retry,
        "task_s": time.monotonic() - started,
        # format="webdataset": samples copied (no token shards).
        "documents": sum(s["documents"] for s in shards) or
        (result.get("records") or {}).get("records", 0),
        "tokens": sum(s["tokens"] for s in shards),
        "input_bytes": manifest.get("counters", {}).get("input_bytes", 0),
        "elapsed_s": result.get("elapsed_s", 0.0),
    }


def _print_progress(done: int, total: int, result: Dict[str, Any], skipped: int,
                    started: float) -> None:
    what = ("finished before, skipped" if result["skipped"] else
            f"{result['documents']} documents in {result['task_s']:.1f} s")
    retry = " (a retry: an earlier attempt's worker died)" if result["retry"] else ""
    print(f"stoker.ray.pack: task {result['task']}: {what}{retry}; {done}/{total} tasks done "
          f"({skipped} skipped) after {time.monotonic() - started:.1f} s",
          file=sys.stderr, flush=True)


def _local(path: str) -> str:
    """A local path made absolute on the driver (Ray workers resolve relative paths from where
    `ray start` ran); a URI as it is."""
    return path if "://" in path else os.path.abspath(path)


def _check_num_cpus(ray: Any, num_cpus: int) -> None:
    """ValueError when no live node has ``num_cpus`` CPUs: Ray would wait for one forever."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    most = max((n.get("Resources", {}).get("CPU", 0) for n in nodes), default=0)
    if nodes and num_cpus > most:
        raise ValueError(f"num_cpus={num_cpus}: no node of this Ray cluster has more than "
                         f"{most:g} CPUs, so Ray would wait for one forever; give "
                         f"num_cpus={most:g} or less")


def pack(
    inputs: Union[PathLike, Sequence[PathLike]],
    output: PathLike,
    tokenizer: str = "bytes",
    *,
    num_tasks: int,
    num_cpus: int = 1,
    max_retries: int = 3,
    overwrite: bool = False,
    progress: Union[bool, Callable[[int, int, Dict[str, Any]], None]] = True,
    ray_options: Optional[Dict[str, Any]] = None,
    **pack_options: Any,
) -> Dict[str, Any]:
    """Packs ``inputs`` into ``output`` (a local path every node sees, or s3://) as ``num_tasks``
    Ray tasks, then merges; returns the merged manifest. Relative local paths are made absolute
    here, on the driver: they must name storage every node sees at the same path.

    The input list is taken once, here, and recorded as ``output/inputs.json``; every task splits
    it the same way (contiguous, balanced by bytes). Each task packs with ``num_workers=num_cpus``
    and asks Ray for as many CPUs; a task whose worker dies is retried up to ``max_retries`` times, and a
    rerun of the whole call skips every task whose receipt matches (``overwrite=True`` redoes
    them). ``progress``: True prints a line per finished task to stderr (its own time, and whether
    it was a retry); a callable gets ``(done, total, task_result)``. ``ray_options`` go to
    ``.options()`` of the Ray task (e.g. ``runtime_env``, ``resources``,
    ``scheduling_strategy``). ``pack_options`` are those of ``stoker.pack`` (text_field,
    shard_size, utf8, on_error, dtype, input_format, key_field, format, pattern, special, eos,
    ...); task_index, task_count and num_workers are set here.
    """
    import ray  # optional dependency: imported only here

    from ._tasks import merge, pack_plan

    if num_tasks < 1:
        raise ValueError("num_tasks must be at least 1")
    for name in ("task_index", "task_count", "num_workers", *_spelling.DEPRECATED["num_workers"]):
        if name in pack_options:
            raise ValueError(f"stoker.ray.pack sets {name} itself (num_workers=num_cpus)")
    # Resolved here, on the driver: a worker resolves a relative path from the directory where
    # its node's `ray start` ran (docs/pack.md: paths are absolute or on storage every node sees).
    inputs = [_local(p) for p in _spelling.paths(inputs)]
    output = _local(os.fspath(output))
    if os.path.isdir(tokenizer) or os.path.isfile(tokenizer):
        tokenizer = os.path.abspath(tokenizer)  # a model folder or file, not a name
    if not ray.is_initialized():
        ray.init()
    _check_num_cpus(ray, num_cpus)
    if num_tasks == 1:  # one task is an ordinary pack: no plan, no receipt
        task = ray.remote(num_cpus=num_cpus, max_retries=max_retries)(_run_single)
        return ray.get(task.options(**(ray_options or {})).remote(
            inputs, output, tokenizer, num_cpus, overwrite, pack_options))
    # The plan before any task starts, so that every task splits the same list.
    pack_plan(inputs, output, num_tasks, input_format=pack_options.get("input_format", "auto"),
              format=pack_options.get("format", "stoker"))
    task = ray.remote(num_cpus=num_cpus, max_retries=max_retries,
                      retry_exceptions=False)(_pack_task)
    task = task.options(**(ray_options or {}))
    pending = [task.remote(inputs, output, tokenizer, i, num_tasks, num_cpus, overwrite,
                           pack_options) for i in range(num_tasks)]
    started = time.monotonic()
    done = skipped = 0
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for ref in ready:
            result = ray.get(ref)  # a task that failed after its retries raises here
            done += 1
            skipped += result["skipped"]
            if callable(progress):
                progress(done, num_tasks, result)
            elif progress:
                _print_progress(done, num_tasks, result, skipped, started)
    return merge(output)


def _run_single(inputs: List[str], output: str, tokenizer: str, num_workers: int,
                overwrite: bool, options: Dict[str, Any]) -> Dict[str, Any]:
    import stoker

    return stoker.pack(inputs, output, tokenizer, num_workers=num_workers, overwrite=overwrite,
                       task_index=0, task_count=1, **options)["manifest"]


__all__ = ["pack"]
