"""The bad-input list of docs/formats.md, one case per format, on shards that each format's
reference writer made and that we then damaged: a short tar block and a bad tar checksum field
(WebDataset), a bad TFRecord data CRC, an MDS sample offset past the end, a LitData item offset
past the end, a Parquet footer that does not parse, a truncated Arrow IPC file (save_to_disk) and
a missing column. Each is one clear error from `stoker pack` (exit 2) naming the file and the
byte offset; under --bad-lines skip it is a counted skip (corrupt_shards_skipped, or
bad_lines_skipped for a record without the field) and the good shard's documents are packed."""
import json

import numpy as np
import pytest

from records_testlib import error_of, import_streaming, jsonl_documents, pack, read_dataset

GOOD = [f"good document {i} ключ" for i in range(12)]
BAD = [f"bad document {i}" for i in range(12)]


def wds_shard(path, texts):
    import webdataset as wds
    with wds.TarWriter(str(path)) as w:
        for i, t in enumerate(texts):
            w.write({"__key__": f"s{i:04d}", "text": t.encode()})
    return path


def short_tar_block(d):
    data = wds_shard(d / "bad.tar", BAD).read_bytes()
    (d / "bad.tar").write_bytes(data[:3 * 512 + 100])  # inside the second member's header
    return [wds_shard(d / "good.tar", GOOD), d / "bad.tar"], "bad.tar", r"truncated"


def bad_tar_checksum(d):
    data = bytearray(wds_shard(d / "bad.tar", BAD).read_bytes())
    second = data.index(b"s0001.text")
    data[second + 2] ^= 0x20
    (d / "bad.tar").write_bytes(bytes(data))
    return [wds_shard(d / "good.tar", GOOD), d / "bad.tar"], "bad.tar", \
        f"bad tar header checksum at byte offset {second}"


def tfrecord_file(path, texts):
    import tfrecord
    w = tfrecord.TFRecordWriter(str(path))
    for t in texts:
        w.write({"text": (t.encode(), "byte")})
    w.close()
    return path


def bad_tfrecord_crc(d):
    data = bytearray(tfrecord_file(d / "bad.tfrecord", BAD).read_bytes())
    first = 16 + int.from_bytes(data[:8], "little")
    data[first + 12] ^= 1  # the second record's first data byte
    (d / "bad.tfrecord").write_bytes(bytes(data))
    return [tfrecord_file(d / "good.tfrecord", GOOD), d / "bad.tfrecord"], "bad.tfrecord", \
        f"TFRecord data CRC mismatch at byte offset {first}"


def mds_dir(path, texts):
    streaming = import_streaming()
    with streaming.MDSWriter(out=str(path), columns={"text": "str"}) as w:
        for t in texts:
            w.write({"text": t})
    return path


def mds_offset_past_the_end(d):
    shard = mds_dir(d / "bad", BAD) / "shard.00000.mds"
    data = bytearray(shard.read_bytes())
    data[8:12] = (10**8).to_bytes(4, "little")  # offsets[1]
    shard.write_bytes(bytes(data))
    return [mds_dir(d / "good", GOOD), d / "bad"], "shard.00000.mds", \
        "MDS sample offset 100000000 past the end of the shard at byte offset 8"


def litdata_dir(path, texts):
    from litdata.streaming.writer import BinaryWriter
    w = BinaryWriter(str(path), chunk_bytes=1 << 20)
    for i, t in enumerate(texts):
        w[i] = {"text": t, "id": np.int64(i).reshape(1)}  # a NumPy leaf: classic chunks
    w.done()
    w.merge()
    return path


def litdata_offset_past_the_end(d):
    chunk = next(litdata_dir(d / "bad", BAD).glob("chunk-*.bin"))
    data = bytearray(chunk.read_bytes())
    data[8:12] = (1 << 30).to_bytes(4, "little")  # item 0 ends far past the chunk
    chunk.write_bytes(bytes(data))
    return [litdata_dir(d / "good", GOOD), d / "bad"], chunk.name, "item 0 at byte offset"


def parquet_file(path, texts):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({"text": texts}), path)
    return path


def parquet_footer(d):
    data = parquet_file(d / "bad.parquet", BAD).read_bytes()
    (d / "bad.parquet").write_bytes(data[:-8] + b"\xff\xff\x00\x00PAR1")
    return [parquet_file(d / "good.parquet", GOOD), d / "bad.parquet"], "bad.parquet", \
        f"byte offset {len(data) - 8}"


def hf_dir(path, texts):
    import datasets
    datasets.Dataset.from_dict({"text": texts}).save_to_disk(str(path))
    return path


def truncated_arrow_ipc(d):
    arrow = next(hf_dir(d / "bad", BAD * 50).glob("*.arrow"))
    data = arrow.read_bytes()
    arrow.write_bytes(data[:len(data) // 2])
    return [hf_dir(d / "good", GOOD), d / "bad"], arrow.name, "byte offset"


CORRUPT = [short_tar_block, bad_tar_checksum, bad_tfrecord_crc, mds_offset_past_the_end,
           litdata_offset_past_the_end, parquet_footer, truncated_arrow_ipc]


def counters(out):
    return json.loads((out / "manifest.json").read_text()).get("counters", {})


@pytest.mark.parametrize("case", CORRUPT, ids=lambda c: c.__name__)
def test_corrupt_shard_is_one_error_naming_file_and_offset_or_a_counted_skip(tmp_path, case):
    if case in (litdata_offset_past_the_end,):
        pytest.importorskip("litdata")
    if case in (truncated_arrow_ipc,):
        pytest.importorskip("datasets")
    inputs, name, message = case(tmp_path)
    err = error_of("pack", "--progress", "off", *inputs, "-o", tmp_path / "fail")
    assert name in err and message in err and "byte offset" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "fail" / "manifest.json").exists()
    pack(*inputs, "-o", tmp_path / "skip", "--on-error", "skip")
    assert counters(tmp_path / "skip")["corrupt_shards_skipped"] == 1
    docs = read_dataset(tmp_path / "skip")[1]
    assert docs[:len(GOOD)] == jsonl_documents(tmp_path, GOOD)


@pytest.mark.parametrize("write", [wds_shard, tfrecord_file, mds_dir, parquet_file, hf_dir,
                                   litdata_dir], ids=lambda w: w.__name__)
def test_missing_column_names_the_file_or_is_a_counted_skip(tmp_path, write):
    if write is litdata_dir:
        pytest.importorskip("litdata")
    if write is hf_dir:
        pytest.importorskip("datasets")
    name = {"wds_shard": "t.tar", "tfrecord_file": "t.tfrecord", "parquet_file": "t.parquet"}
    path = write(tmp_path / name.get(write.__name__, "t"), GOOD)
    err = error_of("pack", "--progress", "off", path, "--text-field", "body", "-o",
                   tmp_path / "fail")
    assert "'body'" in err and "record 0" in err and (path.name in err or "t/" in err), err
    assert len(err.strip().splitlines()) == 1, err
    # Under skip every record without the field is counted; a JSONL file gives the documents.
    (tmp_path / "more.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in BAD))
    pack(path, tmp_path / "more.jsonl", "-o", tmp_path / "skip", "--on-error", "skip",
         "--text-field", "body")
    assert counters(tmp_path / "skip")["bad_lines_skipped"] == len(GOOD)
    assert read_dataset(tmp_path / "skip")[1] == jsonl_documents(tmp_path, BAD)
