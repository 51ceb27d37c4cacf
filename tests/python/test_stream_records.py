"""stoker.Stream over record shards (records::RecordSource, the text field chosen by text_field):
WebDataset tars written by webdataset.TarWriter, TFRecord files written by tfrecord.TFRecordWriter,
MDS directories written by mosaicml-streaming's MDSWriter, LitData chunks written by litdata's
BinaryWriter, Parquet files written by pyarrow.parquet (one shard per row group) and Hugging Face
save_to_disk directories (one shard per Arrow IPC file) stream the same documents as the same
texts in JSONL and as `stoker.pack` of the same shards; batches do not depend on num_workers; a
resume inside a record shard equals the uninterrupted stream; a record without the text field
names the shard and record, or is a counted skip under on_error="skip"."""

import collections
import json

import pytest

import stoker
from records_testlib import import_streaming

TEXTS = [" ".join([f"record {i} ключ"] * (1 + (7 * i) % 11)) for i in range(150)]


def write_jsonl(path, texts):
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    return path


def write_wds(d, texts, per_shard=40, field="txt"):
    import webdataset as wds
    paths = []
    for s in range(0, len(texts), per_shard):
        p = d / f"shard-{s // per_shard:04d}.tar"
        with wds.TarWriter(str(p)) as w:
            for i, t in enumerate(texts[s:s + per_shard]):
                w.write({"__key__": f"sample{s + i:06d}", field: t.encode()})
        paths.append(p)
    return paths


def write_tfrecord(d, texts, per_shard=60):
    import tfrecord
    paths = []
    for s in range(0, len(texts), per_shard):
        p = d / f"part-{s // per_shard:03d}.tfrecord"
        w = tfrecord.TFRecordWriter(str(p))
        for t in texts[s:s + per_shard]:
            w.write({"text": (t.encode(), "byte"), "n": ([len(t)], "int")})
        w.close()
        paths.append(p)
    return paths


def write_mds(d, texts):
    streaming = import_streaming()
    out = d / "mds"
    with streaming.MDSWriter(out=str(out), columns={"text": "str", "n": "int"},
                             size_limit=2048) as w:
        for t in texts:
            w.write({"text": t, "n": len(t)})
    return [out]


def write_litdata(d, texts):
    from litdata.streaming.writer import BinaryWriter
    out = d / "litdata"
    w = BinaryWriter(str(out), chunk_bytes=1500, compression="zstd")
    for i, t in enumerate(texts):
        w[i] = {"text": t, "n": len(t)}
    w.done()
    w.merge()
    assert len(list(out.glob("chunk-*"))) > 2
    return [out]


def write_parquet(d, texts):
    import pyarrow as pa
    import pyarrow.parquet as pq
    p = d / "t.parquet"
    pq.write_table(pa.table({"n": [len(t) for t in texts], "text": texts}), p, row_group_size=35,
                   compression="zstd")
    assert pq.ParquetFile(p).num_row_groups > 2
    return [p]


def write_hf(d, texts):
    import datasets
    out = d / "hf"
    datasets.Dataset.from_dict({"text": texts, "n": [len(t) for t in texts]}).save_to_disk(
        str(out), num_shards=4)
    return [out]


def loader(paths, text_field="text", **kw):
    stream = stoker.Stream([str(p) for p in paths], tokenizer="bytes", text_field=text_field,
                           shuffle_buffer=32)
    opts = dict(seq_len=1024, batch_size=2, num_workers=2, pack="pad", seed=7, output="numpy",
                rank=0, world_size=1, pin_memory=False, segment_ids=True)
    opts.update(kw)
    return stoker.Loader(stream, **opts)


def documents(ld):
    out = collections.Counter()
    for b in ld:
        for row, seg in zip(b["input_ids"], b["segment_ids"]):
            out[tuple(row[seg > 0].tolist())] += 1
    return out


def batches(ld, n):
    out = []
    while len(out) < n:
        for b in ld:
            out.append({k: v.copy() for k, v in b.items()})
            if len(out) == n:
                break
    return out


WRITERS = {
    "webdataset": (write_wds, "txt"),
    "tfrecord": (write_tfrecord, "text"),
    "mds": (write_mds, "text"),
    "litdata": (write_litdata, "text"),
    "parquet": (write_parquet, "text"),
    "arrow": (write_hf, "text"),
}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_record_shards_stream_the_documents_of_the_same_jsonl_and_of_stoker_pack(tmp_path, fmt):
    write, field = WRITERS[fmt]
    (tmp_path / "rec").mkdir()
    shards = write(tmp_path / "rec", TEXTS)
    expected = documents(loader([write_jsonl(tmp_path / "same.jsonl", TEXTS)]))
    assert sum(expected.values()) == len(TEXTS)
    streamed = documents(loader(shards, text_field=field))
    assert streamed == expected
    # The ids of `stoker.pack` of the same shards, as a multiset of documents.
    stoker.pack([str(p) for p in shards], tmp_path / "packed", text_field=field)
    packed = stoker.Loader(str(tmp_path / "packed"), seq_len=1024, batch_size=2, pack="pad",
                           shuffle="none", output="numpy", rank=0, world_size=1,
                           segment_ids=True)
    assert documents(packed) == streamed


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_resume_inside_a_record_shard_equals_the_uninterrupted_stream(tmp_path, fmt):
    write, field = WRITERS[fmt]
    shards = write(tmp_path, TEXTS)
    full = batches(loader(shards, text_field=field, pack="bestfit", seq_len=128), 30)
    for k in (3, 17):
        ld = loader(shards, text_field=field, pack="bestfit", seq_len=128)
        it = iter(ld)
        for _ in range(k):
            next(it)
        state = json.loads(json.dumps(ld.state_dict()))
        resumed = loader(shards, text_field=field, pack="bestfit", seq_len=128, num_workers=1)
        resumed.load_state_dict(state)
        got = batches(resumed, 5)
        assert all(a[x].tobytes() == b[x].tobytes() for a, b in zip(full[k:k + 5], got)
                   for x in a), f"resumed after {k}"


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_same_batches_for_num_workers_1_and_2(tmp_path, fmt):
    write, field = WRITERS[fmt]
    shards = write(tmp_path, TEXTS)
    one = batches(loader(shards, text_field=field, pack="bestfit", seq_len=128, num_workers=1), 25)
    two = batches(loader(shards, text_field=field, pack="bestfit", seq_len=128, num_workers=2), 25)
    assert all(a[x].tobytes() == b[x].tobytes() for a, b in zip(one, two) for x in a)


def test_record_without_the_text_field_names_shard_and_record_or_is_skipped(tmp_path):
    good = write_wds(tmp_path, TEXTS[:40])
    (tmp_path / "bad").mkdir()
    bad = write_wds(tmp_path / "bad", ["no text here"] * 3, field="json")
    with pytest.raises(ValueError, match=r"shard-0000\.tar record 0 \(key 'sample000000'.*txt"):
        documents(loader(good + bad, text_field="txt"))
    assert sum(documents(loader(good + bad, text_field="txt", on_error="skip")).values()) == 40


def test_stoker_scan_writes_scans_the_stream_uses(tmp_path, run_stoker):
    (tmp_path / "data").mkdir()
    shards = write_tfrecord(tmp_path / "data", TEXTS)
    jsonl = write_jsonl(tmp_path / "data" / "more.jsonl", TEXTS[:50])
    cache = tmp_path / "cache"
    p = run_stoker("scan", *shards, jsonl, "--scan-cache", cache)
    assert p.returncode == 0, p.stderr
    assert len(list(cache.glob("*.stoker-scan"))) == len(shards) + 1
    assert sorted(x.name for x in (tmp_path / "data").iterdir()) == sorted(
        x.name for x in shards + [jsonl])  # nothing written beside the data
    inputs = [str(x) for x in shards + [jsonl]]

    def steps(scan_cache):
        s = stoker.Stream(inputs, scan_cache=scan_cache, shuffle_buffer=16)
        return len(stoker.Loader(s, seq_len=64, batch_size=2, pack="bestfit", output="numpy",
                                 rank=0, world_size=1))
    assert steps(str(cache)) == steps(None) > 0
    # The former spelling still works, with a warning.
    p = run_stoker("index", "--stream", jsonl, "--beside")
    assert p.returncode == 0, p.stderr
    assert "deprecated" in p.stderr and "stoker scan" in p.stderr
    assert (tmp_path / "data" / ".more.jsonl.stoker-scan").exists()
    p = run_stoker("index", str(jsonl), str(jsonl))
    assert p.returncode == 2 and "one DATASET" in p.stderr


def test_index_refuses_stream_flags_without_stream(tmp_path, run_stoker):
    # They were accepted and ignored: `index DATASET --tokenizer X` wrote a bytes-free index.
    p = run_stoker("index", tmp_path, "--tokenizer", "bytes")
    assert p.returncode == 2 and "--tokenizer" in p.stderr and "stoker scan" in p.stderr


def test_bench_stream_finds_the_scan_that_scan_wrote(tmp_path, run_stoker):
    # The same flags mean the same thing on both commands: --utf8 and the scan cache included
    # (before, index --stream --utf8 skip / --cache-dir wrote scans bench --stream never read).
    jsonl = write_jsonl(tmp_path / "in.jsonl", TEXTS)
    cache = tmp_path / "scans"
    p = run_stoker("scan", jsonl, "--utf8", "skip", "--scan-cache", cache)
    assert p.returncode == 0, p.stderr
    bench = ["bench", "--stream", jsonl, "--seq-len", "64", "--batch-size", "2", "--batches", "2",
             "--warmup-batches", "0", "--num-workers", "1", "--scan-cache", cache]
    p = run_stoker(*bench, "--utf8", "skip")
    assert p.returncode == 0, p.stderr
    assert "stream pre-scan: 1 of 1 file(s) from scan files" in p.stderr
    p = run_stoker(*bench)  # another --utf8: another scan (keyed by the reader's options)
    assert p.returncode == 0, p.stderr
    assert "stream pre-scan: 0 of 1 file(s) from scan files" in p.stderr
