"""Compatibility of stoker's token readers and writer with the reference implementations.

- Shards written by megatron-core's IndexedDatasetBuilder, for every dtype it supports, read back
  through `stoker inspect` with identical token ids and counts, and pass `stoker verify`.
- Shards written by stoker (`stoker pack`) read back through megatron-core's IndexedDataset.
- NumPy .npy (v1, v2, v3), nanoGPT raw .bin and llm.c headered .bin made with NumPy.
- Bad files give one error line naming the file and a non-zero exit.
"""

import json
import warnings

import numpy as np
import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import torch
    from megatron.core.datasets.indexed_dataset import (
        DType,
        IndexedDataset,
        IndexedDatasetBuilder,
    )

MEGATRON_DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64, np.float64, np.float32,
                   np.uint16]


def inspect_json(run_stoker, path):
    r = run_stoker("inspect", "--json", path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def show_document(run_stoker, path, doc):
    r = run_stoker("inspect", path, "--show-document", doc)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def documents(seed, count, vocab):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, size=count)
    lengths[0] = 0  # an empty document is legal in both formats
    return [rng.integers(0, vocab, size=n) for n in lengths]


@pytest.mark.parametrize("dtype", MEGATRON_DTYPES, ids=lambda d: np.dtype(d).name)
def test_reads_shards_written_by_megatron_core(tmp_path, run_stoker, dtype):
    assert DType.code_from_dtype(dtype) in range(1, 9)
    vocab = 100 if np.dtype(dtype).itemsize == 1 else 30000
    docs = documents(int(DType.code_from_dtype(dtype)), 25, vocab)
    prefix = str(tmp_path / "mc_text_document")
    builder = IndexedDatasetBuilder(prefix + ".bin", dtype=dtype)
    for d in docs[:-1]:
        builder.add_item(torch.tensor(d))
        builder.end_document()
    # The last document has two sequences, as with --split-sentences.
    builder.add_document(torch.tensor(np.concatenate([docs[-1], [7, 8, 9]])), [len(docs[-1]), 3])
    builder.finalize(prefix + ".idx")

    ref = IndexedDataset(prefix)
    summary = inspect_json(run_stoker, prefix)
    assert summary["format"] == "megatron"
    assert summary["dtype"] == np.dtype(dtype).name
    assert summary["documents"] == len(ref)  # stoker's documents are Megatron's sequences
    assert summary["tokens"] == int(ref.sequence_lengths.sum())
    for i in range(len(ref)):
        assert show_document(run_stoker, prefix + ".idx", i) == [int(x) for x in ref[i]], i

    r = run_stoker("verify", "--progress", "off", prefix + ".bin")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verify: ok" in r.stdout


def test_megatron_core_reads_shards_written_by_stoker(tmp_path, run_stoker):
    texts = ["hello", "", "héllo wörld", "日本語のテキスト", "x" * 3000]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf-8")
    out = tmp_path / "ds"
    r = run_stoker("pack", src, "-o", out, "--tokenizer", "bytes", "--num-workers", "1",
                   "--progress", "off")
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    eos = manifest["tokenizer"]["eos_id"]
    got = []
    for shard in manifest["shards"]:
        ds = IndexedDataset(str(out / shard["prefix"]))
        assert len(ds) == shard["documents"]
        assert int(ds.sequence_lengths.sum()) == shard["tokens"]
        assert list(ds.document_indices) == list(range(len(ds) + 1))
        assert ds.index.dtype == np.dtype(manifest["dtype"])
        got += [[int(x) for x in ds[i]] for i in range(len(ds))]
    # Empty documents may be skipped by pack (it reports them); the rest must match exactly.
    expected = [list(t.encode("utf-8")) + [eos] for t in texts]
    if len(got) == len(expected) - 1:
        expected = [e for e, t in zip(expected, texts) if t]
    assert got == expected
    for i, ids in enumerate(got):
        assert show_document(run_stoker, out, i) == ids
    assert run_stoker("verify", "--progress", "off", out).returncode == 0


@pytest.mark.parametrize("dtype", [np.uint16, np.int32, np.uint8, np.int64])
def test_npy_v1_written_by_numpy(tmp_path, run_stoker, dtype):
    one = np.arange(0, 50, dtype=dtype)
    np.save(tmp_path / "one.npy", one)
    assert show_document(run_stoker, tmp_path / "one.npy", 0) == one.tolist()
    two = np.arange(0, 60, dtype=dtype).reshape(6, 10)
    np.save(tmp_path / "two.npy", two)
    summary = inspect_json(run_stoker, tmp_path / "two.npy")
    assert (summary["format"], summary["documents"], summary["tokens"]) == ("npy", 6, 60)
    assert show_document(run_stoker, tmp_path / "two.npy", 4) == two[4].tolist()
    fortran = np.asfortranarray(two)
    np.save(tmp_path / "f.npy", fortran)
    assert show_document(run_stoker, tmp_path / "f.npy", 2) == two[2].tolist()
    assert run_stoker("verify", "--progress", "off", tmp_path / "two.npy").returncode == 0


def write_npy_with_version(path, array, version):
    with open(path, "wb") as f:
        header = np.lib.format.header_data_from_array_1_0(array)
        if version == (2, 0):
            np.lib.format.write_array_header_2_0(f, header)
        else:
            # NumPy writes v3 only for non-latin-1 field names, which plain arrays never have, so
            # the v3 layout (v2 with a UTF-8 header) is written here by hand.
            text = repr(header).encode("utf-8")
            text += b" " * ((-(12 + len(text) + 1)) % 64) + b"\n"
            f.write(b"\x93NUMPY\x03\x00" + len(text).to_bytes(4, "little") + text)
        f.write(array.tobytes())


@pytest.mark.parametrize("version", [(2, 0), (3, 0)])
def test_npy_v2_and_v3(tmp_path, run_stoker, version):
    array = np.arange(1000, 1100, dtype=np.uint16).reshape(4, 25)
    path = tmp_path / "v.npy"
    write_npy_with_version(path, array, version)
    assert np.array_equal(np.load(path), array)  # NumPy agrees the file is valid
    assert path.read_bytes()[6] == version[0]
    assert show_document(run_stoker, path, 3) == array[3].tolist()


def test_nanogpt_and_llmc_bins(tmp_path, run_stoker):
    toks = np.array([1, 2, 50256, 65535, 7], dtype=np.uint16)
    toks.tofile(tmp_path / "train.bin")
    s = inspect_json(run_stoker, tmp_path / "train.bin")
    assert (s["format"], s["documents"], s["tokens"]) == ("nanogpt", 1, 5)
    assert show_document(run_stoker, tmp_path / "train.bin", 0) == toks.tolist()

    hdr = np.zeros(256, dtype=np.int32)
    hdr[:3] = [20240520, 1, len(toks)]
    (tmp_path / "fineweb_000001.bin").write_bytes(hdr.tobytes() + toks.tobytes())
    s = inspect_json(run_stoker, tmp_path / "fineweb_000001.bin")
    assert (s["format"], s["dtype"], s["tokens"]) == ("llmc", "uint16", 5)
    assert show_document(run_stoker, tmp_path / "fineweb_000001.bin", 0) == toks.tolist()

    llama = np.array([128000, 9, 128001], dtype=np.uint32)
    hdr[:3] = [20240801, 7, len(llama)]
    (tmp_path / "llama.bin").write_bytes(hdr.tobytes() + llama.tobytes())
    assert show_document(run_stoker, tmp_path / "llama.bin", 0) == llama.tolist()
    assert run_stoker("verify", "--progress", "off", tmp_path / "llama.bin").returncode == 0


def make_megatron(prefix, docs=((1, 2, 3), (4, 5))):
    builder = IndexedDatasetBuilder(prefix + ".bin", dtype=np.uint16)
    for d in docs:
        builder.add_item(torch.tensor(d))
        builder.end_document()
    builder.finalize(prefix + ".idx")


def damage(path, fn):
    data = bytearray(open(path, "rb").read())
    open(path, "wb").write(bytes(fn(data)))


@pytest.mark.parametrize(
    "case,file,fn,needle",
    [
        ("truncated_bin", ".bin", lambda d: d[:-2], "truncated"),
        ("truncated_idx", ".idx", lambda d: d[:-3], "truncated"),
        ("wrong_magic", ".idx", lambda d: b"XXIDIDX\0\0" + d[9:], "at byte 0: bad magic"),
        ("unknown_dtype", ".idx", lambda d: d[:17] + b"\x0c" + d[18:], "unknown dtype code 12"),
        ("empty_idx", ".idx", lambda d: b"", "empty file"),
    ],
)
def test_bad_files_give_one_clear_line(tmp_path, run_stoker, case, file, fn, needle):
    prefix = str(tmp_path / case)
    make_megatron(prefix)
    damage(prefix + file, fn)
    r = run_stoker("inspect", prefix)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("stoker inspect: error: ")
    assert prefix + file in lines[0] and needle in lines[0], lines[0]
    r = run_stoker("verify", "--progress", "off", prefix)
    assert r.returncode == 1, r.stdout + r.stderr
    problems = [l for l in r.stderr.splitlines() if l.startswith("stoker verify: problem: ")]
    assert len(problems) == 1 and prefix + file in problems[0], r.stderr


def test_dataset_damage_is_found_by_verify(tmp_path, run_stoker):
    src = tmp_path / "in.txt"
    src.write_text("some text to pack " * 50)
    out = tmp_path / "ds"
    assert run_stoker("pack", src, "-o", out, "--progress", "off").returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    bin_path = out / (manifest["shards"][0]["prefix"] + ".bin")
    damage(bin_path, lambda d: d[:10] + bytes([d[10] ^ 1]) + d[11:])
    r = run_stoker("verify", "--progress", "off", out)
    assert r.returncode == 1
    assert "checksum mismatch" in r.stderr and str(bin_path) in r.stderr, r.stderr
    bin_path.unlink()
    r = run_stoker("inspect", out)
    assert r.returncode == 2
    assert str(bin_path) in r.stderr and "missing shard" in r.stderr, r.stderr


def test_missing_path_and_usage_errors(tmp_path, run_stoker):
    r = run_stoker("verify", tmp_path / "nope")
    assert r.returncode == 2 and str(tmp_path / "nope") in r.stderr
    r = run_stoker("inspect", tmp_path / "nope", "--show-document", "0")
    assert r.returncode == 2
    assert run_stoker("inspect").returncode == 2
    np.save(tmp_path / "a.npy", np.arange(3, dtype=np.uint16))
    r = run_stoker("inspect", tmp_path / "a.npy", "--show-document", "1")
    assert r.returncode == 2 and "does not exist" in r.stderr


@pytest.mark.parametrize(
    "case,array,needle",
    [
        ("big_endian", np.arange(4, dtype=">u2"), "big-endian"),
        ("pickle", np.array([1, "x"], dtype=object), "pickles"),
        ("strings", np.array(["a", "b"]), "not a token type"),
        ("three_d", np.zeros((2, 2, 2), dtype=np.uint16), "3-dimensional"),
    ],
)
def test_numpy_arrays_that_are_not_token_data_are_refused(tmp_path, run_stoker, case, array,
                                                          needle):
    path = tmp_path / f"{case}.npy"
    np.save(path, array, allow_pickle=True)
    r = run_stoker("inspect", path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and needle in lines[0], r.stderr
