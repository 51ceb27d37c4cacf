"""Token-array columns of record datasets as TokenSources for the indexed path (OpenTokenSource):
MDS ndarray columns, LitData TokensLoader items, Parquet list<int> columns and save_to_disk
directories. The batches that stoker.Loader makes from them equal the batches it makes from the
same documents packed by stoker, and `stoker bench` / `stoker plan` / `stoker inspect` take them
in place."""
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch  # noqa: F401  (stoker.Loader yields torch tensors)

import stoker
from records_testlib import import_streaming, read_dataset, run

SEQ, BATCH = 32, 4


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """A stoker dataset packed from text, and its documents (token ids including EOS)."""
    d = tmp_path_factory.mktemp("packed")
    texts = [f"token source doc {i} 月" * (i % 6 + 1) for i in range(80)]
    (d / "in.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    p = run("pack", "--progress", "off", d / "in.jsonl", "-o", d / "ds")
    assert p.returncode == 0, p.stderr
    return d / "ds", read_dataset(d / "ds")[1]


def batches(path, **kw):
    loader = stoker.Loader(str(path), seq_len=SEQ, batch_size=BATCH, num_workers=2, seed=3, **kw)
    return [b["input_ids"].numpy().copy() for b in loader]


def assert_same_batches(path, packed):
    ref = batches(packed[0])
    got = batches(path)
    assert len(got) == len(ref) > 5
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)


def test_parquet_token_column(tmp_path, packed):
    docs = packed[1]
    t = pa.table({"text": [str(i) for i in range(len(docs))],
                  "input_ids": pa.array(docs, pa.list_(pa.int32()))})
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=30)
    assert_same_batches(tmp_path / "t.parquet", packed)


def test_hf_save_to_disk_token_column(tmp_path, packed):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict({"input_ids": packed[1]}).save_to_disk(
        str(tmp_path / "hf"), max_shard_size="4KB")
    assert_same_batches(tmp_path / "hf", packed)


def test_mds_ndarray_token_column(tmp_path, packed):
    streaming = import_streaming()
    with streaming.MDSWriter(out=str(tmp_path / "mds"), columns={"tokens": "ndarray:uint16"},
                             compression="zstd", size_limit=1 << 11) as w:
        for doc in packed[1]:
            w.write({"tokens": np.array(doc, np.uint16)})
    assert_same_batches(tmp_path / "mds", packed)
    # The indexed path's tools take it in place.
    for args in (["inspect", "--json"], ["plan", "--seq-len", SEQ, "--batch-size", BATCH]):
        p = run(*args[:1], tmp_path / "mds", *args[1:])
        assert p.returncode == 0, (args, p.stderr)
    p = run("bench", tmp_path / "mds", "--seq-len", SEQ, "--batch-size", BATCH, "--batches", 20,
            "--warmup-batches", 0)
    assert p.returncode == 0, p.stderr


def test_litdata_tokens_loader_items(tmp_path, packed):
    pytest.importorskip("litdata")
    from litdata.streaming.item_loader import TokensLoader
    from litdata.streaming.writer import BinaryWriter
    w = BinaryWriter(str(tmp_path / "ld"), chunk_size=500, item_loader=TokensLoader())
    for i, doc in enumerate(packed[1]):
        w[i] = np.array(doc, np.int32)
    w.done()
    w.merge()
    assert_same_batches(tmp_path / "ld", packed)


def test_a_dataset_without_a_token_column_names_its_fields(tmp_path):
    pq.write_table(pa.table({"text": ["a", "b"]}), tmp_path / "t.parquet")
    p = run("inspect", tmp_path / "t.parquet")
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "text (string)" in p.stderr and "--text-field" in p.stderr, p.stderr
