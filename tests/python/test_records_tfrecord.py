"""TFRecord files of tf.train.Example: our reader yields exactly the records and features that the
reference (PyPI tfrecord 1.14.6: its writer, its record iterator and its example_pb2 protobuf
classes) yields, for plain, gzip and zlib files, unicode feature names, empty lists, unpacked
lists and a huge record; both CRCs are checked; pack from TFRecord equals pack from JSONL, and
int64 token features are copied without re-tokenizing."""
import gzip
import json
import struct
import zlib

import crc32c
import numpy as np
import pytest
import tfrecord
from tfrecord import example_pb2

from records_testlib import dump, error_of, pack, read_dataset


def reference(path, compression_type=None):
    """The reference's records as (key bytes, {feature: bytes | [bytes] | [numbers]})."""
    out = []
    for i, raw in enumerate(tfrecord.tfrecord_iterator(str(path), compression_type=compression_type)):
        ex = example_pb2.Example.FromString(bytes(raw))
        fields = {}
        for name, feature in ex.features.feature.items():
            kind = feature.WhichOneof("kind")
            if kind == "bytes_list":
                values = list(feature.bytes_list.value)
                fields[name] = values[0] if len(values) == 1 else values
            elif kind == "float_list":
                fields[name] = [float(np.float32(v)) for v in feature.float_list.value]
            elif kind == "int64_list":
                fields[name] = list(feature.int64_list.value)
            else:
                fields[name] = []
        out.append((str(i).encode(), fields))
    return out


def write_reference(path, n=20):
    w = tfrecord.TFRecordWriter(str(path))
    for i in range(n):
        w.write({"text": (f"record {i} ключ".encode(), "byte"), "ids": ([i, -i, 2**40], "int"),
                 "w": ([0.5, i / 3], "float"), "名前": (b"", "byte")})
    w.close()


def frame(data):
    length = struct.pack("<Q", len(data))
    mask = lambda c: (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF  # noqa: E731
    return (length + struct.pack("<I", mask(crc32c.crc32c(length))) + data +
            struct.pack("<I", mask(crc32c.crc32c(data))))


def test_reference_writer_files_read_identically(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_reference(path)
    expected = reference(path)
    assert len(expected) == 20
    assert dump(str(path)) == expected
    (tmp_path / "b.tfrecord.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert dump(str(tmp_path / "b.tfrecord.gz")) == reference(tmp_path / "b.tfrecord.gz", "gzip")
    # Compression sniffed from the first bytes when the name does not say.
    (tmp_path / "c.tfrecord").write_bytes(zlib.compress(path.read_bytes()))
    assert dump(str(tmp_path / "c.tfrecord")) == expected
    (tmp_path / "d-00000-of-00001").write_bytes(gzip.compress(path.read_bytes()))
    assert dump(str(tmp_path / "d-00000-of-00001")) == expected


def test_protobuf_made_examples_with_unpacked_lists_and_a_huge_record(tmp_path):
    exs = []
    ex = example_pb2.Example()
    ex.features.feature["many"].bytes_list.value.extend([b"a", b"", b"\xff" * 10])
    ex.features.feature["none"].bytes_list.SetInParent()
    ex.features.feature["ints"].int64_list.value.extend([-(2**63), 2**63 - 1, 0])
    exs.append(ex.SerializeToString())
    huge = example_pb2.Example()
    huge.features.feature["blob"].bytes_list.value.append(bytes(range(256)) * (96 * 1024))
    exs.append(huge.SerializeToString())
    # Unpacked int64 (0x08) and float (0x0d) values, written by hand.
    feature = b"\x1a\x04\x08\x05\x08\x07"
    entry = b"\x0a\x01u\x12" + bytes([len(feature)]) + feature
    feature2 = b"\x12\x05\x0d" + struct.pack("<f", 1.25)
    entry2 = b"\x0a\x01f\x12" + bytes([len(feature2)]) + feature2
    features = b"\x0a" + bytes([len(entry)]) + entry + b"\x0a" + bytes([len(entry2)]) + entry2
    exs.append(b"\x0a" + bytes([len(features)]) + features)
    path = tmp_path / "p.tfrecord"
    path.write_bytes(b"".join(frame(e) for e in exs))
    ours = dump(str(path))
    assert ours == reference(path)
    assert ours[2][1] == {"u": [5, 7], "f": [1.25]}
    assert len(ours[1][1]["blob"]) == 256 * 96 * 1024


def test_bad_crcs_and_truncation_are_errors_with_file_and_offset(tmp_path):
    good = frame(example_pb2.Example().SerializeToString()) * 3
    second = len(good) // 3
    for where, what in [(second + 9, "length CRC mismatch"), (second + 12, "data CRC mismatch")]:
        bad = bytearray(good)
        bad[where] ^= 1
        path = tmp_path / f"bad{where}.tfrecord"
        path.write_bytes(bytes(bad))
        err = error_of("records", str(path))
        assert f"{path.name}: TFRecord {what} at byte offset {second}" in err, err
    (tmp_path / "t.tfrecord").write_bytes(good[:-3])
    assert "truncated TFRecord" in error_of("records", str(tmp_path / "t.tfrecord"))


def test_pack_from_tfrecord_text_and_token_features(tmp_path):
    texts = [f"tf document {i} ключ" * (i % 4 + 1) for i in range(30)]
    w = tfrecord.TFRecordWriter(str(tmp_path / "docs.tfrecord"))
    for i, t in enumerate(texts):
        w.write({"text": (t.encode(), "byte"), "ids": (list(t.encode()), "int"),
                 "id": (f"doc-{i}".encode(), "byte")})
    w.close()
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts),
                                         encoding="utf-8")
    pack(tmp_path / "docs.tfrecord", "-o", tmp_path / "tf")
    pack(tmp_path / "docs.jsonl", "-o", tmp_path / "jsonl")
    expected = read_dataset(tmp_path / "jsonl")[1]
    assert read_dataset(tmp_path / "tf")[1] == expected
    # Token ids: copied, EOS appended, identical to tokenizing the text with the bytes tokenizer.
    pack(tmp_path / "docs.tfrecord", "--text-field", "ids", "-o", tmp_path / "ids")
    assert read_dataset(tmp_path / "ids")[1] == expected
    bad = tfrecord.TFRecordWriter(str(tmp_path / "bad.tfrecord"))
    bad.write({"ids": ([1, 999], "int"), "id": (b"the-key", "byte")})
    bad.close()
    err = error_of("pack", "--progress", "off", tmp_path / "bad.tfrecord", "--text-field", "ids",
                   "--key-field", "id", "-o", tmp_path / "bad")
    assert "key 'the-key'" in err and "token 999" in err and "vocabulary" in err
