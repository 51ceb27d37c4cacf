"""Data for bench/peers/run_peers.py: the Megatron token file every loader reads, and its
conversion into each peer's own format (rows of seq_len + 1 tokens at stride seq_len)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_data import write_megatron  # noqa: E402,F401  (re-exported for run_peers.py)

SEQ = 2048


def rows(prefix):
    mm = np.memmap(prefix + ".bin", dtype=np.uint16, mode="r")
    return mm, (len(mm) - 1) // SEQ


def convert(peer, prefix, out, workers):
    """Writes the rows (seq_len + 1 tokens, stride seq_len) in the peer's format under `out`."""
    mm, n = rows(prefix)
    if peer == "mds":
        from streaming import MDSWriter
        with MDSWriter(out=out, columns={"tokens": "bytes"}, compression=None,
                       size_limit="64mb") as w:
            for i in range(n):
                w.write({"tokens": mm[i * SEQ:i * SEQ + SEQ + 1].tobytes()})
    elif peer == "litdata":
        import torch
        from litdata import TokensLoader, optimize
        per = 1 << 22
        inputs = [(s, min(len(mm), s + per)) for s in range(0, len(mm), per)]
        optimize(fn=_litdata_chunk, inputs=inputs, output_dir=out, chunk_bytes="64MB",
                 item_loader=TokensLoader(), num_workers=workers, mode="overwrite")
        del torch
    elif peer == "wds":
        import webdataset as wds
        os.makedirs(out, exist_ok=True)
        with wds.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxsize=64 << 20,
                             verbose=0) as w:
            for i in range(n):
                w.write({"__key__": f"{i:09d}", "tokens.bin": mm[i * SEQ:i * SEQ + SEQ + 1].tobytes()})
    elif peer == "hf":
        import datasets
        feats = datasets.Features({"tokens": datasets.Sequence(datasets.Value("uint16"))})
        ds = datasets.Dataset.from_generator(
            _hf_rows, gen_kwargs={"prefix": prefix}, features=feats,
            cache_dir=os.path.join(out + ".cache"))
        ds.save_to_disk(out)


def _litdata_chunk(span):
    import torch
    # Runs in LitData's worker processes: the prefix comes through the environment.
    mm = np.memmap(os.environ["PEERS_PREFIX"] + ".bin", dtype=np.uint16, mode="r")
    yield torch.from_numpy(mm[span[0]:span[1]].astype(np.int32))


def _hf_rows(prefix):
    mm, n = rows(prefix)
    for i in range(n):
        yield {"tokens": mm[i * SEQ:i * SEQ + SEQ + 1]}
