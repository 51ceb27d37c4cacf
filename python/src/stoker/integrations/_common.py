"""What every adapter needs: the datasets' tokenizer, the checks against a model's, state files."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, List, Optional

from .._loader import Loader


def dataset_tokenizer(loader: Loader) -> Optional[Dict[str, Any]]:
    """The tokenizer record (``kind``, ``vocab_size``, ``eos_id``...) of the loader's datasets.

    None for a stream or a synthetic loader (no manifest to read). ValueError when two datasets
    of the loader were packed with different tokenizers: no model can train on both.
    """
    from .._tools import inspect

    specs = loader.datasets
    found: Optional[Dict[str, Any]] = None
    first = None
    for path, _weight in specs:
        tok = inspect(path).get("tokenizer")
        if tok is None:
            continue
        if found is None:
            found, first = tok, path
        elif (tok.get("vocab_size"), tok.get("eos_id")) != (found.get("vocab_size"),
                                                              found.get("eos_id")):
            raise ValueError(
                f"stoker.integrations: datasets {first!r} and {path!r} were packed with different "
                f"tokenizers (vocab_size {found.get('vocab_size')} / {tok.get('vocab_size')}, "
                f"eos_id {found.get('eos_id')} / {tok.get('eos_id')}); pack them with one "
                "tokenizer")
    return found


def check_tokenizer(loader: Loader, *, what: str, vocab_size: Optional[int] = None,
                    eos_id: Optional[int] = None, embeddings: Optional[int] = None) -> None:
    """ValueError unless the model/tokenizer ``what`` can train on the loader's tokens.

    ``vocab_size`` and ``eos_id`` (a tokenizer's) must equal the datasets'; ``embeddings`` (a
    model's embedding rows) must hold every token id of the datasets. None skips a check.
    """
    tok = dataset_tokenizer(loader)
    if tok is None:
        return
    data_vocab, data_eos = tok.get("vocab_size"), tok.get("eos_id")
    hint = "pack the data with the model's tokenizer (stoker pack --tokenizer MODEL_DIR)"
    if vocab_size is not None and data_vocab is not None and vocab_size != data_vocab:
        raise ValueError(f"stoker.integrations: the {what} has a vocabulary of {vocab_size} tokens "
                         f"and the datasets were packed with one of {data_vocab}: {hint}")
    if eos_id is not None and data_eos is not None and eos_id != data_eos:
        raise ValueError(f"stoker.integrations: the {what}'s end-of-sequence id is {eos_id} and "
                         f"the datasets' is {data_eos}: {hint}")
    if embeddings is not None and data_vocab is not None and embeddings < data_vocab:
        raise ValueError(f"stoker.integrations: the {what} has {embeddings} embedding rows and the "
                         f"datasets' token ids go up to {data_vocab - 1}: {hint}")


def write_json_atomically(path: str, obj: Any) -> None:
    """Writes ``obj`` as JSON to ``path`` through a temporary file and a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".stoker-state-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def global_states(loader: Loader) -> List[Dict[str, Any]]:
    """What an adapter saves: the loader's state, which is global for datasets (one entry), and
    every rank's for a ``stoker.Stream`` (``stoker.gather_state_dicts``: a collective, so every
    rank calls this at the same step). The first state carries the run record (docs/lineage.md;
    a stream's is the same on every rank, so it is kept once), so that ``stoker trace --run``
    reads any framework checkpoint."""
    if loader.is_stream:
        from .._stream import gather_state_dicts

        states = gather_state_dicts(loader)
        record = loader.run_record()
        if states and record is not None:
            states[0] = dict(states[0], run_record=record)
        return states
    return [loader.state_dict(run_record=True)]


def states_of(saved: Any, where: str) -> List[Dict[str, Any]]:
    """The list of per-rank loader states an adapter saved (one state: a list of one)."""
    if isinstance(saved, dict) and saved.get("format") == "stoker-loader-state":
        return [saved]
    if isinstance(saved, list) and saved and all(isinstance(s, dict) for s in saved):
        return saved
    raise ValueError(f"{where}: not a stoker loader state (expected Loader.state_dict() or the "
                     "list of every rank's)")


def doc_lens_of(cu_seqlens: "torch.Tensor", rows: int, seq_len: int,
                lengths: "Optional[torch.Tensor]" = None) -> "torch.Tensor":
    """``[rows, max segments per row]`` lengths (0-padded) from cu_seqlens over ``rows x
    seq_len`` flattened tokens (stoker's segments never cross rows). ``lengths``, one per
    segment, are placed instead of the segments' own (with pad_each_document_to: cu_seqlens_padded
    places the segments, cu_seqlens gives their real lengths)."""
    import torch

    cu = cu_seqlens.to(torch.int64)
    lens = cu[1:] - cu[:-1] if lengths is None else lengths.to(torch.int64)
    row = torch.div(cu[1:] - 1, seq_len, rounding_mode="floor")
    counts = torch.bincount(row, minlength=rows)
    first = torch.cumsum(counts, 0) - counts
    col = torch.arange(len(lens)) - first[row]
    out = torch.zeros(rows, int(counts.max()), dtype=torch.int32)
    out[row, col] = lens.to(torch.int32)
    return out
