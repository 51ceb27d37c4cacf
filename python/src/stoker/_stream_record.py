"""The run record of a stoker.Stream (docs/lineage.md, "Streams"): what `stoker trace --run` and
`stoker summary --run` need to replay the stream, whose order is a pure function of (inputs, seed,
epoch, world size, options). One segment per stretch of the run that one world of fresh planners
reproduces: the first from step 0, one after each set_epoch or load_state_dict (its `resume`
says where it starts), marked `elastic` after a resume on another world size (that stretch is the
old ranks' documents dealt again: `stoker trace` replays the previous segment to the resume and
deals its ranks' states as load_state_dict did)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from . import _stoker


def _local(path: str) -> str:
    """A path a record keeps: an existing local path made absolute (the record is read from any
    directory), anything else (a URI, "bytes", "") as given."""
    return os.path.abspath(path) if path and "://" not in path and os.path.exists(path) else path


def _rows(options: Any, table: str) -> Dict[str, Any]:
    """Every row of the option table with a text form, by name, as `options` holds it."""
    return {r["name"]: getattr(options, r["name"]) for r in _stoker.option_table(table)
            if r["default"] is not None}


def stream_record(stream_options: Any, on_error: str) -> Dict[str, Any]:
    """The stream of a segment: its inputs, every StreamOptions row, the tokenizer's rows and the
    loader's on_error (tools/stoker/stream_run_record.cc reads each back by its row)."""
    rows = _rows(stream_options, "stream")
    for key in ("tokenizer", "chat_template"):
        rows[key] = _local(str(rows.get(key, "")))
    return {"inputs": [_local(str(p)) for p in stream_options.inputs], "options": rows,
            "tokenizer_options": _rows(stream_options.tokenizer_options, "tokenizer"),
            "on_error": on_error}


def stream_resume(state: Optional[Dict[str, Any]], elastic: bool) -> Optional[Dict[str, Any]]:
    """Where a stream segment starts (None: the run's start): the plan position, the world size
    that wrote it, and whether the resume dealt the old world's documents again (elastic)."""
    if state is None:
        return None
    return {"epoch": int(state.get("epoch", 0)),
            "rows_consumed": int(state.get("rows_consumed", 0)),
            "world_size": int(state.get("world_size") or 0), "elastic": bool(elastic)}
