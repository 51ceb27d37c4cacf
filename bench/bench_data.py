"""The synthetic token data the side-by-side benchmarks share (bench/loader_vs_torch.py and
bench/peers/): a Megatron MMIDIDX v1 uint16 dataset with log-normal document lengths."""
import os

import numpy as np


def write_megatron(prefix, tokens, seed=1234):
    """Writes prefix.bin / prefix.idx (Megatron MMIDIDX v1, uint16) unless already there."""
    if os.path.exists(prefix + ".idx") and os.path.getsize(prefix + ".bin") == 2 * tokens:
        return
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    rng = np.random.default_rng(seed)
    lengths = []
    left = tokens
    while left > 0:
        chunk = np.maximum(1, rng.lognormal(np.log(800.0), 1.0, 100_000).astype(np.int64))
        cum = np.cumsum(chunk)
        take = chunk[cum <= left]
        if len(take) < len(chunk):
            take = np.append(take, left - take.sum())
            take = take[take > 0]
        lengths.append(take)
        left -= int(take.sum())
    lengths = np.concatenate(lengths).astype(np.int32)
    with open(prefix + ".bin", "wb") as f:
        for start in range(0, tokens, 1 << 24):
            n = min(1 << 24, tokens - start)
            rng.integers(0, 50000, n, dtype=np.uint16).tofile(f)
    n = len(lengths)
    pointers = np.zeros(n, dtype=np.int64)
    pointers[1:] = np.cumsum(lengths.astype(np.int64) * 2)[:-1]
    with open(prefix + ".idx", "wb") as f:
        f.write(b"MMIDIDX\x00\x00")
        f.write(np.array([1], dtype=np.uint64).tobytes())
        f.write(np.array([8], dtype=np.uint8).tobytes())  # uint16
        f.write(np.array([n, n + 1], dtype=np.uint64).tobytes())
        f.write(lengths.tobytes())
        f.write(pointers.tobytes())
        f.write(np.arange(n + 1, dtype=np.int64).tobytes())
