"""WebDataset tar shards: our reader yields exactly the samples, keys and bytes that the
webdataset library (PyPI webdataset 1.0.2) yields, on shards its own writer made (plain, .tar.gz,
unicode and long keys, empty fields, a huge sample) and on GNU-tar-made shards; brace expansion
matches braceexpand; corrupt shards are one error naming file and offset; pack from tar equals
pack from the same texts as JSONL."""
import gzip
import io
import json
import re
import shutil
import subprocess
import tarfile

import braceexpand
import pytest
import webdataset as wds
import zstd

from records_testlib import dump, error_of, pack, read_dataset

HUGE = 24 << 20


def reference(urls):
    """webdataset's samples as (key bytes, {ext: bytes})."""
    out = []
    for s in wds.WebDataset(urls, shardshuffle=False, empty_check=False):
        out.append((s["__key__"].encode("utf-8", "surrogateescape"),
                    {k: v for k, v in s.items() if not k.startswith("__")}))
    return out


def write_samples(pattern, samples, maxcount=4):
    with wds.ShardWriter(pattern, maxcount=maxcount, verbose=0) as sink:
        for s in samples:
            sink.write(s)


def samples(n=10):
    out = []
    for i in range(n):
        out.append({"__key__": f"sample{i:06d}", "txt": f"text {i} ключ", "cls": i,
                    "json": {"i": i}, "bin": b"\x00\xff" * i})
    out.append({"__key__": "ключ/月-" + "k" * 120, "txt": "unicode and a long key", "empty": b""})
    return out


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
def test_reference_writer_shards_read_identically(tmp_path, suffix):
    write_samples(str(tmp_path / f"train-%06d{suffix}"), samples())
    urls = str(tmp_path / f"train-{{000000..000002}}{suffix}")
    ours = dump(urls)
    assert ours == reference(urls)
    assert len(ours) == 11
    assert ours[-1][1]["empty"] == b""


def test_huge_sample_and_zstd_shard(tmp_path):
    big = bytes(range(256)) * (HUGE // 256)
    write_samples(str(tmp_path / "big-%06d.tar"), [{"__key__": "big", "bin": big, "txt": "x"}])
    plain = tmp_path / "big-000000.tar"
    (tmp_path / "big.tar.zst").write_bytes(zstd.compress(plain.read_bytes(), 3))
    expected = reference(str(plain))
    assert dump(str(plain)) == expected
    assert dump(str(tmp_path / "big.tar.zst")) == expected
    assert len(expected[0][1]["bin"]) == len(big)


def test_gnu_tar_shards_with_directories_long_names_and_dots(tmp_path):
    src = tmp_path / "src"
    deep = src / "a.b" / ("d" * 110)
    deep.mkdir(parents=True)
    for name, data in [("x.seg.png", b"png"), ("x.txt", b"seg text"), ("y.TXT", b"upper"),
                       (".hidden", b"dot"), ("noext", b"ignored")]:
        (deep / name).write_bytes(data)
    (src / "__index__").write_bytes(b"meta")
    shard = tmp_path / "gnu.tar"
    subprocess.run(["tar", "--format=gnu", "--sort=name", "-C", str(src), "-cf", str(shard), "."],
                   check=True)
    ours = dump(str(shard))
    assert ours == reference(str(shard))
    assert any(key.endswith(b"/x") and "seg.png" in f for key, f in ours)


def test_pax_global_header_and_python_ustar(tmp_path):
    shard = tmp_path / "pax.tar"
    with tarfile.open(shard, "w", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": "global"}) as tar:
        for name, data in [("k1.txt", b"one"), ("k1.cls", b"1"), ("k2.txt", b"two")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1.5
            tar.addfile(info, io.BytesIO(data))
    assert dump(str(shard)) == reference(str(shard))


def test_brace_expansion_matches_braceexpand(tmp_path):
    write_samples(str(tmp_path / "s-%02d.tar"), samples(12), maxcount=1)
    for pattern in ["s-{00..11}.tar", "s-{11..00..3}.tar", "s-{00,07,{10,11}}.tar",
                    "s-0{0..9}.tar::s-1{0..1}.tar"]:
        names = [n for part in pattern.split("::") for n in
                 [str(tmp_path / x) for x in braceexpand.braceexpand(part)]]
        ours = [key for key, _ in dump(str(tmp_path / pattern.split("::")[0]) +
                                       "".join("::" + str(tmp_path / p)
                                               for p in pattern.split("::")[1:]))]
        assert ours == [key for key, _ in reference(names)], pattern


def test_corrupt_shards_are_one_error_naming_file_and_offset(tmp_path):
    write_samples(str(tmp_path / "c-%06d.tar"), samples(3))
    good = (tmp_path / "c-000000.tar").read_bytes()
    short = tmp_path / "short.tar"
    short.write_bytes(good[:2048 + 100])
    err = error_of("records", str(short))
    assert re.search(r"short\.tar: truncated .* at byte offset \d+", err), err
    second = good.index(b"sample000000.cls")  # a ustar header after the first member
    bad = bytearray(good)
    bad[second + 3] ^= 0x20
    (tmp_path / "bad.tar").write_bytes(bytes(bad))
    err = error_of("records", str(tmp_path / "bad.tar"))
    assert f"bad tar header checksum at byte offset {second}" in err
    (tmp_path / "gz.tar.gz").write_bytes(gzip.compress(good)[:300])
    assert "gz.tar.gz" in error_of("records", str(tmp_path / "gz.tar.gz"))


@pytest.mark.parametrize("name", ["../evil.txt", "/abs/evil.txt", "a/../../evil.txt"])
def test_unsafe_member_names_are_errors(tmp_path, name):
    shard = tmp_path / "evil.tar"
    with tarfile.open(shard, "w") as tar:
        info = tarfile.TarInfo(name)
        info.size = 4
        tar.addfile(info, io.BytesIO(b"evil"))
    err = error_of("records", str(shard))
    assert "unsafe member name" in err and "evil.tar" in err


def test_pack_from_webdataset_equals_pack_from_jsonl(tmp_path):
    texts = [f"document {i} with text ключ 月" * (i % 5 + 1) for i in range(40)]
    write_samples(str(tmp_path / "p-%06d.tar"),
                  [{"__key__": f"k{i:04d}", "txt": t, "cls": i} for i, t in enumerate(texts)],
                  maxcount=7)
    (tmp_path / "docs.jsonl").write_text("".join(
        json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    pack(str(tmp_path / "p-{000000..000005}.tar"), "--text-field", "txt", "-o", tmp_path / "wds")
    pack(str(tmp_path / "docs.jsonl"), "-o", tmp_path / "jsonl")
    assert read_dataset(tmp_path / "wds")[1] == read_dataset(tmp_path / "jsonl")[1]
    err = error_of("pack", "--progress", "off", str(tmp_path / "p-000000.tar"), "--text-field",
                   "nope", "-o", tmp_path / "bad")
    assert "p-000000.tar record 0 (key 'k0000'" in err and "no field 'nope'" in err
    shutil.rmtree(tmp_path / "bad", ignore_errors=True)
