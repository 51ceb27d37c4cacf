"""stoker.merge / stoker.pack_plan: the task-split pack of docs/pack.md ("Many machines")."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Sequence, Union

from . import _spelling, _stoker
from ._datasets import PathLike


def pack_plan(inputs: Union[PathLike, Sequence[PathLike]], output: PathLike, task_count: int,
              *, input_format: str = "auto", format: str = "stoker") -> Dict[str, Any]:
    """Records the input plan of a task-split pack at ``output/inputs.json`` (or reads the one
    there) like ``stoker pack --task-count N --list``.

    Returns the plan (``files``: [{"path", "bytes", "kind", ...}], ``task_count``, ...) with
    ``checksum`` and ``tasks``: for each task, the list of its files (a contiguous, byte-balanced
    slice; ``format="webdataset"``: the files are tar members, and no sample is cut). Raises
    ValueError when the recorded plan is for other inputs, another format or task count.
    """
    args = _spelling.fill(_stoker.PackArgs(), inputs=_spelling.paths(inputs),
                          output=os.fspath(output), task_index=0, task_count=task_count,
                          input_format=input_format, format=format)
    text, checksum, slices = _stoker.pack_plan(args)
    plan = json.loads(text)
    plan["checksum"] = checksum
    plan["tasks"] = [plan["files"][first:last] for first, last in slices]
    return plan


def merge(output: PathLike) -> Dict[str, Any]:
    """Finishes a task-split pack like ``stoker merge OUTPUT``: checks the plan and every task's
    receipt, writes ``output/manifest.json`` over the tasks' shards (local or s3://, no shard
    copied) and returns it. Raises ValueError naming a missing or mismatched task."""
    return json.loads(_stoker.merge_tasks(os.fspath(output)))


__all__: List[str] = ["merge", "pack_plan"]
