"""`stoker trace` with pad_each_document_to: each piece's row_offset is where the loader put it
(after the padded rooms of the pieces before it), as the loader's provenance says and as the
batch's cu_seqlens_padded starts a segment there. It used to add the unpadded lengths. For token
datasets (plan flags and a run record) and for streams."""

import json
import subprocess
from collections import defaultdict

import numpy as np
import pyarrow.parquet as pq

import stoker
from test_provenance import pack, write_jsonl

M = 8
KEYS = ("shard", "record", "offset", "length", "row_offset")


def served(ld, steps):
    """(step -> rows of pieces) as provenance gives them, each row_offset checked against the
    batch's cu_seqlens_padded (a segment starts there)."""
    out = {}
    for step, batch in zip(range(steps), ld):
        starts = set(np.asarray(batch["cu_seqlens_padded"]).tolist())
        S = batch["input_ids"].shape[1]
        rows = []
        for r, row in enumerate(batch["provenance"]):
            assert all(r * S + p["row_offset"] in starts for p in row)
            rows.append([tuple(p[k] for k in KEYS) for p in row])
        out[step] = rows
    ld.close()
    return out


def traced(path, rank=0):
    got = defaultdict(lambda: defaultdict(list))
    for r in pq.read_table(path).to_pylist():
        if r["rank"] == rank:
            got[r["step"]][r["row"]].append(tuple(r[k] for k in KEYS))
    return {s: [rows[k] for k in sorted(rows)] for s, rows in got.items()}


def test_trace_row_offsets_equal_the_loaders_with_padding(tmp_path, stoker_cli):
    a = str(pack(tmp_path, "a", 300))
    kw = dict(seq_len=64, batch_size=2, pack="bestfit", seed=5, rank=0, world_size=2,
              pad_each_document_to=M, num_workers=1, output="numpy", pin_memory=False)
    ld = stoker.Loader(a, provenance=True, **kw)
    seen = served(ld, 6)
    assert any(p[4] % M == 0 and p[4] > 0 and any(q[3] % M for q in row)
               for rows in seen.values() for row in rows for p in row), "padding was tested"
    # From plan flags.
    out = tmp_path / "flags.parquet"
    p = subprocess.run([stoker_cli, "trace", a, "--seq-len", "64", "--batch-size", "2", "--pack",
                        "bestfit", "--seed", "5", "--world-size", "2", "--pad-each-document-to",
                        str(M), "--steps", "0..5", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert traced(out) == seen
    # From a run record.
    ld = stoker.Loader(a, provenance=True, **kw)
    for _, _ in zip(range(6), ld):
        pass
    state = tmp_path / "state.json"
    state.write_text(json.dumps(ld.state_dict(run_record=True)))
    ld.close()
    out = tmp_path / "run.parquet"
    p = subprocess.run([stoker_cli, "trace", "--run", str(state), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert traced(out) == seen


def test_stream_trace_row_offsets_equal_the_stream_loaders_with_padding(tmp_path, stoker_cli):
    paths = [str(write_jsonl(tmp_path / f"part-{k}.jsonl", n, f"p{k}"))
             for k, n in enumerate([150, 90])]
    stream = stoker.Stream(paths, tokenizer="bytes", shuffle_buffer=64)
    ld = stoker.Loader(stream, seq_len=64, batch_size=4, num_workers=1, pack="bestfit", seed=3,
                       rank=1, world_size=2, output="numpy", pin_memory=False, provenance=True,
                       pad_each_document_to=M)
    seen = served(ld, 5)
    out = tmp_path / "stream.parquet"
    p = subprocess.run([stoker_cli, "trace", *paths, "--stream", "--tokenizer", "bytes",
                        "--shuffle-buffer", "64", "--seq-len", "64", "--batch-size", "4",
                        "--pack", "bestfit", "--seed", "3", "--world-size", "2",
                        "--pad-each-document-to", str(M), "--steps", "0..4", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert traced(out, rank=1) == seen
