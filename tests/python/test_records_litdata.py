"""LitData optimized chunks: on datasets that litdata 0.2.76's own writer made (BinaryWriter, and
optimize() for TokensLoader), our reader yields exactly the items that litdata's StreamingDataset
yields: PyTreeLoader dicts of int/str/NumPy token leaves (classic chunks, chunks compressed whole,
per sample and in frames), flat dicts that litdata stores as an Arrow row footer, unicode and empty text;
TokensLoader items cut into litdata's blocks. Damaged chunks name the file; pack from LitData text
equals pack from JSONL, and token leaves are copied."""
import json
import shutil

import numpy as np
import pytest

from records_testlib import dump, error_of, jsonl_documents, packed_documents, run

litdata = pytest.importorskip("litdata")
from litdata import StreamingDataset, TokensLoader  # noqa: E402
from litdata.streaming.writer import BinaryWriter  # noqa: E402


def write(out, items, **kw):
    w = BinaryWriter(str(out), **kw)
    for i, item in enumerate(items):
        w[i] = item
    w.done()
    w.merge()


def reference(root, **kw):
    # StreamingDataset decompresses .zstd.bin chunks in place: read a copy.
    copy = root.parent / (root.name + "-ref")
    shutil.copytree(root, copy)
    ds = StreamingDataset(str(copy), **kw)
    return [ds[i] for i in range(len(ds))]


def as_ours(item):
    out = {}
    for k, v in item.items():
        if isinstance(v, str):
            out[k] = v.encode()
        elif isinstance(v, np.ndarray):
            out[k] = v.ravel().tolist()
        elif isinstance(v, float):
            out[k] = [v]
        else:
            out[k] = [int(v)]
    return out


def ours(path):
    return [fields for _, fields in dump(path)]


def tree(i):
    return {"id": i - 3, "text": "" if i % 5 == 0 else f"lit {i} ключ 月 🚀" * (i % 3 + 1),
            "tokens": np.arange(i % 6, dtype=np.uint16) * 1000}


@pytest.mark.parametrize("kw", [
    {"chunk_bytes": 400},
    {"chunk_bytes": 400, "compression": "zstd", "compression_level": "chunk"},
    {"chunk_bytes": 400, "compression": "zstd", "compression_level": "sample"},
    {"chunk_bytes": 400, "compression": "zstd"},  # litdata's default: framed ("batch")
    {"chunk_bytes": 4000, "compression": "zstd:9", "compression_level": "batch",
     "compression_batch_size": 3},
    {"chunk_size": 7},
])
def test_pytree_items_equal_streaming_dataset(tmp_path, kw):
    write(tmp_path / "ld", [tree(i) for i in range(40)], **kw)
    if kw.get("compression") and kw.get("compression_level", "batch") == "batch":
        assert next((tmp_path / "ld").glob("chunk-*.bin")).read_bytes().startswith(b"LDFZ01")
    expected = [as_ours(x) for x in reference(tmp_path / "ld")]
    assert ours(tmp_path / "ld") == expected
    assert len(expected) == 40


def test_flat_dict_arrow_footer_chunks(tmp_path):
    # litdata 0.2.7x stores flat dicts of scalars as an Arrow IPC footer inside the chunk.
    items = [{"id": i, "text": f"row {i} é" if i % 4 else ""} for i in range(30)]
    write(tmp_path / "ld", items, chunk_bytes=300)
    assert b"LDARW01" in next((tmp_path / "ld").glob("chunk-*.bin")).read_bytes()
    assert ours(tmp_path / "ld") == [as_ours(x) for x in reference(tmp_path / "ld")]


def test_huge_item_empty_fields_and_unicode_keys(tmp_path):
    huge = "ü" * (3 << 20)  # 6 MiB of UTF-8, far past chunk_bytes
    items = [{"текст": t, "名前": np.arange(k, dtype=np.int32)}
             for t, k in [("", 0), ("small 月", 3), (huge, 5), ("", 1)]]
    write(tmp_path / "ld", items, chunk_bytes=1 << 16, compression="zstd",
          compression_level="chunk")
    got = ours(tmp_path / "ld")
    assert got == [as_ours(x) for x in reference(tmp_path / "ld")]
    assert got[2]["текст"] == huge.encode() and got[0]["текст"] == b"" and got[0]["名前"] == []


def gen_tokens(i):
    yield np.arange(i * 10, i * 10 + 7, dtype=np.int32)


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_tokens_loader_items_and_blocks_equal_litdata(tmp_path, compression):
    out = tmp_path / "tok"
    if compression is None:  # optimize() as users run it (a worker process: slow, once)
        litdata.optimize(fn=gen_tokens, inputs=list(range(20)), output_dir=str(out),
                         chunk_size=40, item_loader=TokensLoader(), num_workers=1)
    else:
        write(out, [next(gen_tokens(i)) for i in range(20)], chunk_size=40,
              item_loader=TokensLoader(), compression="zstd", compression_level="chunk")
    p = run("records", "--dump", out)
    assert p.returncode == 0, p.stderr
    by_chunk = {}
    items = []
    for line in p.stdout.splitlines():
        rec = json.loads(line)
        tokens = rec["fields"][0]["ints"]
        items.append(tokens)
        by_chunk.setdefault(rec["source"], []).extend(tokens)
    assert sorted(items) == [list(range(i * 10, i * 10 + 7)) for i in range(20)]
    # litdata's blocks: each chunk's tokens cut into block_size pieces, leftovers dropped.
    block = 8
    ours_blocks = []
    for c in json.loads((out / "index.json").read_text())["chunks"]:
        tokens = by_chunk[str(out / c["filename"])]
        assert len(tokens) == c["dim"]
        ours_blocks += [tokens[j:j + block] for j in range(0, len(tokens) - block + 1, block)]
    ref = [x.tolist() for x in reference(out, item_loader=TokensLoader(block_size=block))]
    assert ours_blocks == ref


def test_damaged_chunk_names_the_file(tmp_path):
    write(tmp_path / "ld", [tree(i) for i in range(10)], chunk_bytes=10000)
    chunk = next((tmp_path / "ld").glob("chunk-*.bin"))
    data = bytearray(chunk.read_bytes())
    data[8:12] = (1 << 30).to_bytes(4, "little")  # item 0 ends far past the chunk
    chunk.write_bytes(bytes(data))
    err = error_of("records", tmp_path / "ld")
    assert chunk.name in err and "item 0 at byte offset 48" in err, err


def test_pack_from_litdata_text_equals_jsonl_and_tokens_are_copied(tmp_path):
    texts = [f"litdata doc {i} 月" * (i % 5 + 1) for i in range(50)]
    write(tmp_path / "ld", [{"text": t, "ids": np.frombuffer(t.encode(), np.uint8).astype(np.int32)}
                            for t in texts], chunk_bytes=500, compression="zstd",
          compression_level="chunk")
    expected = jsonl_documents(tmp_path, texts)
    assert packed_documents(tmp_path, "text", tmp_path / "ld") == expected
    assert packed_documents(tmp_path, "ids", tmp_path / "ld", "--text-field", "ids") == expected
