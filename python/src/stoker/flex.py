"""FlexAttention block masks for packed batches, built on the CPU without ``create_block_mask``.

A packed batch's document mask (token q attends token k when both lie in the same segment of
``cu_seqlens`` and k <= q; ``"sliding_window"`` also needs q - k < window) is known from the
segment boundaries alone. ``block_tables`` computes FlexAttention's block tables from them in C++
(partial and full blocks, counts and indices, and their transposes), and ``block_mask`` makes the
``torch.nn.attention.flex_attention.BlockMask`` from those tables directly, so the trainer never
evaluates the mask on every token pair (``create_block_mask``). See docs/loader.md,
"FlexAttention".
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from . import _stoker

TABLES = ("kv_num_blocks", "full_kv_num_blocks", "q_num_blocks", "full_q_num_blocks",
          "kv_indices", "full_kv_indices", "q_indices", "full_q_indices")


def block_tables(cu_seqlens: Any, rows: int, seq_len: int, block_size: int = 128,
                 kind: str = "causal", window: Optional[int] = None) -> Dict[str, np.ndarray]:
    """The eight block tables of the document mask of ``rows`` rows of ``seq_len`` tokens.

    ``cu_seqlens``: int32 segment starts over the flattened batch (a stoker batch's
    ``cu_seqlens``, on the host). Returns NumPy int32 arrays shaped as ``BlockMask`` keeps them:
    ``[rows, 1, blocks]`` for the counts and ``[rows, 1, blocks, blocks]`` for the indices.
    """
    if kind == "sliding_window":
        if window is None:
            raise ValueError("kind='sliding_window' needs a window (tokens a query sees)")
    elif window is not None:
        raise ValueError(f"window goes with kind='sliding_window', not {kind!r}")
    cu = np.ascontiguousarray(_to_numpy(cu_seqlens), dtype=np.int32)
    buffer, _ = _stoker.flex_block_tables(cu, rows, seq_len, block_size, kind, window or 0)
    return split_tables(buffer, rows, seq_len, block_size)


def block_mask(cu_seqlens: Any, rows: int, seq_len: int, block_size: int = 128,
               kind: str = "causal", window: Optional[int] = None, device: Any = None,
               seq_idx: Any = None) -> Any:
    """A ``BlockMask`` for the batch's document mask, from ``block_tables`` (torch needed).

    ``seq_idx`` (``[rows, seq_len]``, each token's segment index in ``cu_seqlens``, as the loader
    gives it with ``seq_idx=True``) serves the mask function inside partial blocks; without it, it
    is computed from ``cu_seqlens`` on ``device``.
    """
    import torch

    tables = block_tables(cu_seqlens, rows, seq_len, block_size, kind, window)
    if seq_idx is None:
        cu = torch.as_tensor(_to_numpy(cu_seqlens), dtype=torch.int64)
        ids = torch.arange(len(cu) - 1, dtype=torch.int32)
        seq_idx = torch.repeat_interleave(ids, cu[1:] - cu[:-1]).view(rows, seq_len)
    return _from_tables(tables, seq_len, block_size, kind, window, device, seq_idx)


def split_tables(flat: Any, rows: int, seq_len: int,
                 block_size: int = 128) -> Dict[str, np.ndarray]:
    """The eight tables of a loader batch's ``flex_block_tables`` (``flex_block_mask=`` option:
    one int32 array, the tables one after the other), shaped as ``block_tables`` returns them."""
    flat = np.asarray(_to_numpy(flat), dtype=np.int32).reshape(-1)
    blocks = -(-seq_len // block_size)
    n, x = rows * blocks, rows * blocks * blocks
    if flat.size != 4 * n + 4 * x:
        raise ValueError(f"flex_block_tables has {flat.size} entries; {rows} rows of {seq_len} "
                         f"tokens in blocks of {block_size} need {4 * n + 4 * x}")
    out, at = {}, 0
    for name in TABLES:
        size = n if name.endswith("num_blocks") else x
        shape = (rows, 1, blocks) if size == n else (rows, 1, blocks, blocks)
        out[name] = flat[at:at + size].reshape(shape)
        at += size
    return out


def batch_block_mask(batch: Any, block_size: int = 128, kind: str = "causal",
                     window: Optional[int] = None, device: Any = None) -> Any:
    """The ``BlockMask`` of a loader batch made with ``flex_block_mask=(block_size, kind[,
    window])`` and ``seq_idx=True``: from its ``flex_block_tables``, built by the loader's
    workers, so neither ``create_block_mask`` nor any table is computed here (torch needed)."""
    rows, seq_len = tuple(batch["seq_idx"].shape)
    tables = split_tables(batch["flex_block_tables"], rows, seq_len, block_size)
    return _from_tables(tables, seq_len, block_size, kind, window, device, batch["seq_idx"])


def _from_tables(tables: Dict[str, np.ndarray], seq_len: int, block_size: int, kind: str,
                 window: Optional[int], device: Any, seq_idx: Any) -> Any:
    import torch
    from torch.nn.attention.flex_attention import BlockMask

    t = {k: torch.as_tensor(v).to(device) for k, v in tables.items()}
    seq_idx = torch.as_tensor(seq_idx).to(device)

    def document_mask(b: Any, h: Any, q: Any, k: Any) -> Any:
        allowed = (seq_idx[b, q] == seq_idx[b, k]) & (q >= k)
        return allowed & (q - k < window) if kind == "sliding_window" else allowed

    return BlockMask(
        seq_lengths=(seq_len, seq_len),
        kv_num_blocks=t["kv_num_blocks"], kv_indices=t["kv_indices"],
        full_kv_num_blocks=t["full_kv_num_blocks"], full_kv_indices=t["full_kv_indices"],
        q_num_blocks=t["q_num_blocks"], q_indices=t["q_indices"],
        full_q_num_blocks=t["full_q_num_blocks"], full_q_indices=t["full_q_indices"],
        BLOCK_SIZE=(block_size, block_size), mask_mod=document_mask)


def _to_numpy(a: Any) -> np.ndarray:
    if hasattr(a, "detach"):  # a torch tensor (on the host)
        return a.detach().cpu().numpy()
    return np.asarray(a)
