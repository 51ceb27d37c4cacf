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


def _pack_task(inputs: List[str], output: str, tokenizer: str, index: int, count: int,
               num_workers: int, overwrite: bool, options: Dict[str, Any]) -> Dict[str, Any]:
    import stoker  # in the worker

    result = stoker.pack(inputs, output, tokenizer, task_index=index, task_count=count,
                         num_workers=num_workers, overwrite=overwrite, **options)
    manifest = result.get("manifest") or {}
    shards = manifest.get("shards", [])
    return {
        "task": index,
        "skipped": bool(result.get("skipped", False)),
        # format="webdataset": samples copied (no token shards).
        "documents": sum(s["documents"] for s in shards) or
        (result.get("records") or {}).get("records", 0),
        "tokens": sum(s["tokens"] for s in shards),
        "input_bytes": manifest.get("counters", {}).get("input_bytes", 0),
        "elapsed_s": result.get("elapsed_s", 0.0),
    }


def _print_progress(done: int, total: int, result: Dict[str, Any], skipped: int,
                    started: float) -> None:
    print(f"stoker.ray.pack: {done}/{total} tasks done ({skipped} skipped), task "
          f"{result['task']}: {result['documents']} documents, {time.monotonic() - started:.1f} s",
          file=sys.stderr, flush=True)


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
    Ray tasks, then merges; returns the merged manifest.

    The input list is taken once, here, and recorded as ``output/inputs.json``; every task splits
    it the same way (contiguous, balanced by bytes). Each task packs with ``num_workers=num_cpus``
    and asks Ray for as many CPUs; a task whose worker dies is retried up to ``max_retries`` times, and a
    rerun of the whole call skips every task whose receipt matches (``overwrite=True`` redoes
    them). ``progress``: True prints a line per finished task to stderr; a callable gets
    ``(done, total, task_result)``. ``ray_options`` go to ``.options()`` of the Ray task (e.g.
    ``runtime_env``, ``resources``, ``scheduling_strategy``). ``pack_options`` are those of
    ``stoker.pack`` (text_field, shard_size, utf8, on_error, dtype, input_format, key_field,
    format, pattern, special, eos, ...); task_index, task_count and num_workers are set here.
    """
    import ray  # optional dependency: imported only here

    from ._tasks import merge, pack_plan

    if num_tasks < 1:
        raise ValueError("num_tasks must be at least 1")
    for name in ("task_index", "task_count", "num_workers", *_spelling.DEPRECATED["num_workers"]):
        if name in pack_options:
            raise ValueError(f"stoker.ray.pack sets {name} itself (num_workers=num_cpus)")
    inputs = _spelling.paths(inputs)
    output = os.fspath(output)
    if not ray.is_initialized():
        ray.init()
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
