"""MosaicML MDS: our reader yields exactly the samples the reference (PyPI mosaicml-streaming
0.13.0: MDSWriter and StreamingDataset) yields, for several compressions (none, zstd, zstd:7,
gz), listed hashes (xxh64 checked), several shards, unicode text, empty bytes, a huge sample and
every scalar/ndarray/json encoding; corrupt shards are one error naming file and offset; pack
from MDS text equals pack from JSONL, and ndarray token columns are copied."""
import json
import shutil

import numpy as np
import pytest

from records_testlib import dump, error_of, import_streaming, jsonl_documents, packed_documents

streaming = import_streaming()

COLUMNS = {"id": "int", "text": "str", "tokens": "ndarray:uint16", "raw": "bytes",
           "f32": "float32", "u8": "uint8", "i16": "int16", "f64": "float64",
           "arr": "ndarray", "fixed": "ndarray:int32:2,3", "j": "json", "si": "str_int"}


def sample(i):
    return {"id": i - 50, "text": f"doc {i} ключ 月" * (i % 3), "tokens": np.arange(i % 7 + 1, dtype=np.uint16),
            "raw": b"\x00\xff" * (i % 4), "f32": np.float32(i / 3), "u8": np.uint8(i % 256),
            "i16": np.int16(-i), "f64": i / 7, "arr": np.full((2, i % 3 + 1), i, dtype=np.int64),
            "fixed": np.arange(6, dtype=np.int32).reshape(2, 3) * i, "j": {"i": i, "s": "ü"},
            "si": i * 1000}


def write(out, n=60, compression=None, hashes=(), size_limit=1 << 12, columns=COLUMNS, make=sample):
    with streaming.MDSWriter(out=str(out), columns=columns, compression=compression,
                             hashes=list(hashes), size_limit=size_limit) as w:
        for i in range(n):
            w.write(make(i))


def as_ours(value, encoding):
    """A reference sample value as our dump shows it."""
    if encoding in ("str",):
        return value.encode()
    if encoding == "json":
        return json.dumps(value, sort_keys=True).encode()
    if encoding == "bytes":
        return value
    if isinstance(value, np.ndarray):
        return value.ravel().tolist()
    if isinstance(value, (np.floating, float)):
        return [float(value)]
    return [int(value)]


def reference(root, columns=COLUMNS):
    # StreamingDataset decompresses shards next to the originals: read a copy.
    copy = root.parent / (root.name + "-ref")
    shutil.copytree(root, copy)
    ds = streaming.StreamingDataset(local=str(copy), shuffle=False, batch_size=1)
    out = []
    for i in range(len(ds)):
        s = ds[i]
        out.append({k: as_ours(v, columns[k]) for k, v in s.items()})
    return out


def ours(root):
    return [fields for _, fields in dump(str(root))]


@pytest.mark.parametrize("compression,hashes", [(None, ()), ("zstd", ("sha1", "xxh64")),
                                                ("zstd:7", ()), ("gz", ("blake2b", "sha3_256", "xxh3_64"))])
def test_reference_writer_datasets_read_identically(tmp_path, compression, hashes):
    write(tmp_path / "mds", compression=compression, hashes=hashes)
    index = json.loads((tmp_path / "mds" / "index.json").read_text())
    assert len(index["shards"]) > 2
    got = ours(tmp_path / "mds")
    # json columns: our reader hands out the stored text; compare it parsed.
    for g in got:
        g["j"] = json.dumps(json.loads(g["j"]), sort_keys=True).encode()
    assert got == reference(tmp_path / "mds")


def test_huge_sample(tmp_path):
    cols = {"text": "str", "blob": "bytes"}
    write(tmp_path / "big", n=2, columns=cols, size_limit=1 << 26,
          make=lambda i: {"text": "t" * i, "blob": bytes(range(256)) * (64 * 1024 * (i + 1))})
    got = ours(tmp_path / "big")
    assert got == reference(tmp_path / "big", cols)
    assert len(got[1]["blob"]) == 2 * 256 * 64 * 1024


def test_unicode_column_names_and_empty_values(tmp_path):
    cols = {"名前": "str", "ключ": "bytes", "ids": "ndarray:uint16"}
    write(tmp_path / "u", n=5, columns=cols, compression="zstd",
          make=lambda i: {"名前": "" if i % 2 else f"t {i} 月", "ключ": b"" if i % 3 else b"\x01",
                          "ids": np.arange(1 + i % 2, dtype=np.uint16)})
    got = ours(tmp_path / "u")
    assert got == reference(tmp_path / "u", cols)
    assert got[1]["名前"] == b"" and got[1]["ключ"] == b"" and got[0]["ids"] == [0]


def test_corrupt_shards_and_hash_mismatch(tmp_path):
    write(tmp_path / "mds", hashes=("xxh64",))
    shard = tmp_path / "mds" / "shard.00001.mds"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 1
    shard.write_bytes(bytes(data))
    err = error_of("records", tmp_path / "mds")
    assert "shard.00001.mds: xxh64 digest" in err and "index.json" in err
    write(tmp_path / "sha", compression="zstd", hashes=("md5", "sha256"))
    shard = tmp_path / "sha" / "shard.00002.mds.zstd"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 1
    shard.write_bytes(bytes(data))
    assert "shard.00002.mds.zstd: md5 digest" in error_of("records", tmp_path / "sha")
    write(tmp_path / "plain")
    shard = tmp_path / "plain" / "shard.00000.mds"
    data = bytearray(shard.read_bytes())
    data[8:12] = (10**8).to_bytes(4, "little")  # offsets[1]
    shard.write_bytes(bytes(data))
    err = error_of("records", tmp_path / "plain")
    assert "shard.00000.mds: MDS sample offset 100000000 past the end of the shard at byte offset 8" in err
    shard.write_bytes(b"\x01\x00")
    assert "shard.00000.mds: truncated MDS shard header" in error_of(
        "records", tmp_path / "plain" / "index.json", "--input-format", "mds")
    err = error_of("pack", "--progress", "off", tmp_path / "mds", "--text-field", "missing",
                   "-o", tmp_path / "out")
    assert "no field 'missing'" in err


def test_pack_from_mds_text_and_token_columns(tmp_path):
    texts = [f"mds document {i} 月" * (i % 5 + 1) for i in range(50)]
    cols = {"text": "str", "ids": "ndarray:uint16", "key": "str"}
    write(tmp_path / "mds", n=len(texts), columns=cols, compression="zstd",
          make=lambda i: {"text": texts[i], "ids": np.frombuffer(texts[i].encode(), np.uint8).astype(np.uint16),
                          "key": f"k{i}"})
    expected = jsonl_documents(tmp_path, texts)
    assert packed_documents(tmp_path, "text", tmp_path / "mds") == expected
    assert packed_documents(tmp_path, "ids", tmp_path / "mds", "--text-field", "ids",
                            "--key-field", "key") == expected
