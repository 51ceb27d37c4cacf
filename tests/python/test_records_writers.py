"""`stoker pack --format webdataset` and `--format tfrecord`, and the same writers through
`stoker.pack(format=...)`: the output reads back identically through the reference readers
(webdataset 1.0.2, Python tarfile, tfrecord 1.14.6 and protobuf), the records.json manifest lists
every file with its size and XXH3, and no temporary file stays."""
import json
import struct
import tarfile

import crc32c
import pytest
import tfrecord
import webdataset as wds
import xxhash
from tfrecord import example_pb2

import stoker
from records_testlib import dump, error_of, pack, read_dataset


def pack_as(how, src, out, fmt, shard_size):
    """Packs `src` into `out` in `fmt` through the CLI or the Python API (the same library call);
    returns the record counts that the API reports (None for the CLI)."""
    if how == "cli":
        pack(src, "-o", out, "--format", fmt, "--shard-size", shard_size)
        return None
    r = stoker.pack(src, out, format=fmt, shard_size=shard_size)
    assert r["format"] == fmt
    assert r["records"]["output_dir"] == str(out / "tfrecord" if fmt == "tfrecord" else out)
    assert ("manifest" in r) == (fmt == "tfrecord")
    return r["records"]


def make_tree(root):
    """A directory of 'images' with captions: keys with several members, nested dirs, unicode."""
    files = {}
    for i in range(30):
        sub = "train" if i % 3 else "val/ключ"
        files[f"{sub}/{i:05d}.jpg"] = bytes([i]) * (700 + 97 * i)
        files[f"{sub}/{i:05d}.txt"] = f"caption {i} 月".encode()
        if i % 5 == 0:
            files[f"{sub}/{i:05d}.seg.png"] = b"png" * i
    files["README"] = b"no extension: skipped"
    files["deep/" + "d" * 120 + "/long.json"] = b"{}"
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def check_manifest(out, fmt):
    m = json.loads((out / "records.json").read_text())
    assert m["format"] == fmt
    for f in m["files"]:
        data = (out / f["name"]).read_bytes()
        assert len(data) == f["bytes"]
        assert xxhash.xxh3_64_hexdigest(data) == f["xxh3"]
    assert not list(out.glob("*.tmp"))
    return m


@pytest.mark.parametrize("how", ["cli", "python"])
def test_webdataset_writer_output_reads_back_through_webdataset(tmp_path, how):
    files = make_tree(tmp_path / "src")
    out = tmp_path / "wds"
    counts = pack_as(how, tmp_path / "src", out, "webdataset", "8KiB")
    m = check_manifest(out, "webdataset")
    if counts is not None:
        assert (counts["records"], counts["output_files"], counts["files_skipped"]) == (
            m["records"], len(m["files"]), 1)
        assert counts["output_bytes"] == sum(f["bytes"] for f in m["files"])
    shards = sorted(str(p) for p in out.glob("shard-*.tar"))
    assert len(shards) == len(m["files"]) > 2
    samples = list(wds.WebDataset(shards, shardshuffle=False, empty_check=False))
    expected = {}
    for name, data in files.items():
        if "." not in name.rsplit("/", 1)[-1]:
            continue
        last = name.rsplit("/", 1)
        key = (last[0] + "/" if len(last) == 2 else "") + last[-1].split(".", 1)[0]
        expected.setdefault(key, {})[last[-1].split(".", 1)[1]] = data
    got = {s["__key__"]: {k: v for k, v in s.items() if not k.startswith("__")} for s in samples}
    assert got == expected
    assert len(samples) == len(expected) == m["records"]
    # Every shard is a valid tar for Python's tarfile too, and our reader agrees.
    members = [n for s in shards for n in tarfile.open(s).getnames()]
    assert len(members) == len(files) - 1
    assert [k for k, _ in dump(*shards)] == [s["__key__"].encode() for s in samples]
    err = error_of("pack", "--progress", "off", "--format", "webdataset", tmp_path / "src",
                   "-o", out)
    assert "--overwrite" in err
    with pytest.raises(FileExistsError, match="overwrite"):
        stoker.pack(tmp_path / "src", out, format="webdataset")
    stoker.pack(tmp_path / "src", out, format="webdataset", overwrite=True, shard_size="8KiB")
    assert check_manifest(out, "webdataset") == m


def read_tfrecord_checking_crcs(path):
    data = path.read_bytes()
    mask = lambda c: (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF  # noqa: E731
    pos, out = 0, []
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        assert struct.unpack_from("<I", data, pos + 8)[0] == mask(crc32c.crc32c(data[pos:pos + 8]))
        body = data[pos + 12:pos + 12 + length]
        assert struct.unpack_from("<I", data, pos + 12 + length)[0] == mask(crc32c.crc32c(body))
        out.append(body)
        pos += 16 + length
    return out


@pytest.mark.parametrize("how", ["cli", "python"])
def test_tfrecord_writer_output_reads_back_through_tfrecord(tmp_path, how):
    texts = [f"document {i} ключ" * (i % 7 + 1) for i in range(200)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts),
                                      encoding="utf-8")
    out = tmp_path / "ds"
    counts = pack_as(how, tmp_path / "d.jsonl", out, "tfrecord", "4KiB")
    _, docs = read_dataset(out)
    m = check_manifest(out / "tfrecord", "tfrecord")
    if counts is not None:
        assert (counts["records"], counts["output_files"]) == (len(docs), len(m["files"]))
    files = [out / "tfrecord" / f["name"] for f in m["files"]]
    assert len(files) > 1 and m["records"] == len(docs)
    ids = []
    for f in files:
        for raw in tfrecord.tfrecord_iterator(str(f)):
            ids.append(list(example_pb2.Example.FromString(bytes(raw))
                            .features.feature["input_ids"].int64_list.value))
        assert len(read_tfrecord_checking_crcs(f)) == sum(1 for _ in tfrecord.tfrecord_iterator(str(f)))
    assert ids == docs
    assert [f["input_ids"] for _, f in dump(*map(str, files))] == docs


def test_python_pack_refuses_an_unknown_format_and_a_remote_record_output(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"text": "x"}\n')
    with pytest.raises(ValueError, match="webdataset"):
        stoker.pack(tmp_path / "d.jsonl", tmp_path / "o", format="parquet")
    with pytest.raises(ValueError, match="http://"):
        stoker.pack(tmp_path / "d.jsonl", "http://host/p", format="webdataset")
    assert not (tmp_path / "o").exists()
