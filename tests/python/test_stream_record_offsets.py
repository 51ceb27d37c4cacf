"""Provenance of record shards on the streaming path: each piece's byte_offset is where its record
starts in the shard, found independently of stoker: the tar member header (Python's tarfile) of a
WebDataset sample, the length field of a TFRecord (walking the file's framing), the sample of an
MDS shard (its offset table). The record found there holds the piece's text."""

import struct
import tarfile

import pytest

import stoker
from records_testlib import import_streaming
from test_stream_records import TEXTS, write_mds, write_tfrecord, write_wds


def pieces(paths, text_field="text"):
    stream = stoker.Stream([str(p) for p in paths], tokenizer="bytes", text_field=text_field,
                           shuffle_buffer=16)
    loader = stoker.Loader(stream, seq_len=1024, batch_size=2, num_workers=2, pack="pad", seed=2,
                           output="numpy", rank=0, world_size=1, pin_memory=False,
                           provenance=True)
    out = []
    for b in loader:
        for row, prov in zip(b["input_ids"], b["provenance"]):
            for p in prov:
                at = p["row_offset"]
                text = bytes(row[at:at + p["length"] - 1].astype("uint8").tolist())  # - EOS
                out.append((p, text))
    loader.close()
    return out


def test_webdataset_pieces_name_their_samples_tar_header(tmp_path):
    pytest.importorskip("webdataset")
    got = pieces(write_wds(tmp_path, TEXTS), text_field="txt")
    assert len(got) == len(TEXTS)
    headers = {}
    for path in {p["shard_path"] for p, _ in got}:
        with tarfile.open(path) as tar:
            headers[path] = {m.offset: (m, tar.extractfile(m).read()) for m in tar.getmembers()}
    nonzero = 0
    for p, text in got:
        member, data = headers[p["shard_path"]][p["byte_offset"]]
        assert member.name.endswith(".txt") and data == text, (p, member.name)
        nonzero += p["byte_offset"] > 0
    assert nonzero >= len(TEXTS) - 4  # all but each shard's first sample


def test_tfrecord_pieces_name_their_records_length_field(tmp_path):
    pytest.importorskip("tfrecord")
    got = pieces(write_tfrecord(tmp_path, TEXTS))
    assert len(got) == len(TEXTS)
    frames = {}
    for path in {p["shard_path"] for p, _ in got}:
        data, at, offsets = open(path, "rb").read(), 0, []
        while at < len(data):
            (n,) = struct.unpack_from("<Q", data, at)
            offsets.append((at, data[at + 12:at + 12 + n]))
            at += 8 + 4 + n + 4
        frames[path] = offsets
    for p, text in got:
        at, record = frames[p["shard_path"]][p["record"]]
        assert p["byte_offset"] == at and text in record, p


def test_mds_pieces_name_their_sample(tmp_path):
    import_streaming()
    got = pieces(write_mds(tmp_path, TEXTS))
    assert len(got) == len(TEXTS)
    tables = {}
    for path in {p["shard_path"] for p, _ in got}:
        data = open(path, "rb").read()
        (n,) = struct.unpack_from("<I", data, 0)
        tables[path] = (data, struct.unpack_from(f"<{n + 1}I", data, 4))
    for p, text in got:
        data, offsets = tables[p["shard_path"]]
        begin, end = offsets[p["record"]], offsets[p["record"] + 1]
        assert p["byte_offset"] == begin and text in data[begin:end], p
