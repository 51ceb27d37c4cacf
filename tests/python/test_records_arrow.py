"""Parquet and Hugging Face Arrow: our readers (Arrow C++ from the pyarrow 26 wheel) yield exactly
the rows that the reference readers (pyarrow.parquet.read_table, datasets.load_from_disk) yield on
files that the reference writers made: several Parquet compressions, data page v2, no dictionary,
small row groups (one shard each), unicode, empty and null strings, list<int32|int64|uint16> token
columns, one huge row; save_to_disk directories of several shards. A damaged footer is one error
naming the file and offset; pack from Parquet/Arrow text equals pack from JSONL, token columns are
copied, and a DatasetDict directory is refused naming its splits."""
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from records_testlib import dump, error_of, jsonl_documents, packed_documents, read_dataset, run

datasets = pytest.importorskip("datasets")

HUGE = "ü" * (3 << 20)  # 6 MiB of UTF-8 in one row


def table(n=40, huge=False):
    texts = [None if i % 11 == 5 else "" if i % 7 == 3 else f"doc {i} ключ 月 🚀" * (i % 4 + 1)
             for i in range(n)]
    if huge:
        texts[n // 2] = HUGE
    return pa.table({
        "text": pa.array(texts, pa.string()),
        "ids32": pa.array([list(range(i % 5)) for i in range(n)], pa.list_(pa.int32())),
        "ids64": pa.array([None if i == 2 else [2**40 + i] for i in range(n)], pa.list_(pa.int64())),
        "ids16": pa.array([[65535, i] for i in range(n)], pa.list_(pa.uint16())),
        "score": pa.array([i / 3 for i in range(n)], pa.float64()),
        "label": pa.array([i - 9 for i in range(n)], pa.int64()),
        "raw": pa.array([bytes([i % 256]) * (i % 3) for i in range(n)], pa.binary()),
        "big": pa.array([f"L{i}" for i in range(n)], pa.large_string()),
        "名前 ключ": pa.array([f"u{i}" for i in range(n)], pa.string()),  # a unicode column name
    })


def as_ours(row):
    """A reference row (a dict from to_pylist / datasets) as our dump shows it: null fields are
    left out, text and bytes are bytes, numbers are lists."""
    out = {}
    for k, v in row.items():
        if v is None:
            continue
        if isinstance(v, str):
            out[k] = v.encode()
        elif isinstance(v, bytes):
            out[k] = v
        elif isinstance(v, list):
            out[k] = [float(x) if isinstance(x, float) else int(x) for x in v]
        elif isinstance(v, float):
            out[k] = [v]
        else:
            out[k] = [int(v)]
    return out


def ours(path, **kw):
    return [fields for _, fields in dump(path, **kw)]


@pytest.mark.parametrize("kw", [
    {},  # pyarrow's defaults: snappy, dictionary pages, data page v1
    {"compression": "zstd", "data_page_version": "2.0", "use_dictionary": False},
    {"compression": "none", "use_dictionary": False, "row_group_size": 7},
    {"compression": "gzip", "row_group_size": 16},
    {"compression": "brotli"},
    {"compression": "lz4"},
])
def test_parquet_rows_equal_pyarrow(tmp_path, kw):
    path = tmp_path / "t.parquet"
    pq.write_table(table(), path, **kw)
    expected = [as_ours(r) for r in pq.read_table(path).to_pylist()]
    assert ours(path) == expected
    assert len(expected) == 40 and b"" in [r.get("text") for r in expected]


def test_parquet_row_groups_are_shards_and_keys_are_file_rows(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(table(), path, row_group_size=16)
    assert pq.ParquetFile(path).num_row_groups == 3
    p = run("records", path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["shards"] == 3, p.stdout
    keys = [k for k, _ in dump(path)]
    assert keys == [str(i).encode() for i in range(40)]
    # A directory of Parquet files: sorted by name, each file's row groups in order.
    (tmp_path / "dir").mkdir()
    pq.write_table(table(5), tmp_path / "dir" / "b.parquet")
    pq.write_table(table(3), tmp_path / "dir" / "a.parquet", row_group_size=1)
    expected = [as_ours(r) for f in ("a", "b")
                for r in pq.read_table(tmp_path / "dir" / f"{f}.parquet").to_pylist()]
    assert ours(tmp_path / "dir", input_format="parquet") == expected


def test_parquet_huge_row(tmp_path):
    path = tmp_path / "huge.parquet"
    pq.write_table(table(4, huge=True), path, compression="zstd")
    rows = ours(path)
    assert rows[2]["text"] == HUGE.encode()
    assert rows == [as_ours(r) for r in pq.read_table(path).to_pylist()]


def test_hf_save_to_disk_equals_load_from_disk(tmp_path):
    n = 300
    ds = datasets.Dataset.from_dict({
        "text": [None if i == 4 else f"hf {i} é 🙂" * (i % 3) for i in range(n)],
        "input_ids": [list(range(i % 9)) for i in range(n)],
        "label": [i % 2 for i in range(n)],
    })
    ds.save_to_disk(str(tmp_path / "hf"), max_shard_size="4KB")
    files = json.loads((tmp_path / "hf" / "state.json").read_text())["_data_files"]
    assert len(files) > 1
    reference = datasets.load_from_disk(str(tmp_path / "hf"))
    assert ours(tmp_path / "hf") == [as_ours(reference[i]) for i in range(len(reference))]
    # One .arrow file on its own is an Arrow IPC stream.
    first = tmp_path / "hf" / files[0]["filename"]
    with pa.ipc.open_stream(first) as r:
        assert ours(first) == [as_ours(row) for row in r.read_all().to_pylist()]


def test_hf_save_to_disk_huge_row_empty_fields_and_unicode_columns(tmp_path):
    texts = ["", "small é", HUGE, ""]
    ds = datasets.Dataset.from_dict({"текст": texts, "ids": [[], [1], [2, 3], []],
                                     "raw": [b"", b"\x00", b"\xff" * 9, b""]})
    ds.save_to_disk(str(tmp_path / "hf"))
    reference = datasets.load_from_disk(str(tmp_path / "hf"))
    rows = ours(tmp_path / "hf")
    assert rows == [as_ours(reference[i]) for i in range(len(reference))]
    assert rows[2]["текст"] == HUGE.encode() and rows[0]["raw"] == b""


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_arrow_ipc_files_and_streams_with_buffer_compression(tmp_path, compression):
    t = table(30)
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(tmp_path / "f.arrow", t.schema, options=options) as w:
        w.write_table(t, max_chunksize=8)
    with pa.ipc.new_stream(tmp_path / "s.arrow", t.schema, options=options) as w:
        w.write_table(t, max_chunksize=11)
    with pa.ipc.open_file(tmp_path / "f.arrow") as r:
        expected = [as_ours(row) for row in r.read_all().to_pylist()]
    assert len(expected) == 30
    assert ours(tmp_path / "f.arrow") == expected
    assert ours(tmp_path / "s.arrow") == expected


def test_hf_dataset_dict_is_refused_naming_its_splits(tmp_path):
    ds = datasets.Dataset.from_dict({"text": ["a", "b"]})
    datasets.DatasetDict({"train": ds, "test": ds.select([0])}).save_to_disk(str(tmp_path / "dd"))
    err = error_of("records", tmp_path / "dd")
    assert "train" in err and "test" in err, err
    assert ours(tmp_path / "dd" / "train") == [{"text": b"a"}, {"text": b"b"}]


def test_damaged_parquet_is_one_error_naming_file_and_offset(tmp_path):
    good = tmp_path / "t.parquet"
    pq.write_table(table(), good)
    data = good.read_bytes()
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(data[:-8] + b"\xff\xff\x00\x00PAR1")  # footer length past the start
    err = error_of("records", bad)
    assert "bad.parquet" in err and f"byte offset {len(data) - 8}" in err, err
    (tmp_path / "trunc.parquet").write_bytes(data[: len(data) // 2])
    err = error_of("records", tmp_path / "trunc.parquet")
    assert "trunc.parquet" in err and "Parquet footer" in err, err


def test_pack_from_parquet_and_hf_text_equals_jsonl_and_tokens_are_copied(tmp_path):
    texts = [f"parquet doc {i} 月" * (i % 5 + 1) for i in range(60)]
    ids = [list(t.encode()) for t in texts]  # the bytes tokenizer's ids
    expected = jsonl_documents(tmp_path, texts)
    t = pa.table({"text": texts, "ids": pa.array(ids, pa.list_(pa.uint16())),
                  "key": [f"k{i}" for i in range(60)]})
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=25, compression="zstd")
    assert packed_documents(tmp_path, "pq-text", tmp_path / "t.parquet") == expected
    assert packed_documents(tmp_path, "pq-ids", tmp_path / "t.parquet", "--text-field", "ids",
                            "--key-field", "key") == expected
    datasets.Dataset.from_dict({"text": texts, "ids": ids}).save_to_disk(
        str(tmp_path / "hf"), max_shard_size="2KB")
    assert packed_documents(tmp_path, "hf-text", tmp_path / "hf") == expected
    assert packed_documents(tmp_path, "hf-ids", tmp_path / "hf", "--text-field", "ids") == expected


def test_pack_names_a_missing_column(tmp_path):
    pq.write_table(pa.table({"body": ["a", "b"]}), tmp_path / "t.parquet")
    err = error_of("pack", "--progress", "off", tmp_path / "t.parquet", "-o", tmp_path / "out")
    assert "t.parquet" in err and "'text'" in err and "body" in err, err


def test_python_pack_reads_parquet_by_input_format(tmp_path):
    import stoker
    texts = ["alpha", "beta 月"]
    pq.write_table(pa.table({"body": texts}), tmp_path / "t.data")
    stoker.pack(tmp_path / "t.data", tmp_path / "out", input_format="parquet", text_field="body")
    assert read_dataset(tmp_path / "out")[1] == jsonl_documents(tmp_path, texts)
