"""A `scheme://` that stoker does not serve is one clear error for every input and output path, in
the CLI and in Python; it names what stoker serves and never becomes a local directory ("s3:").
Dataset readers, pack's record inputs and output, merge and index serve s3:// and http(s):// too
(test_remote_datasets.py, test_remote_records.py, test_remote_tools.py); the paths that are still
local-only (JSONL/text pack inputs, state and report files, tokenizers) refuse them."""

import os
from pathlib import Path

import numpy as np
import pytest

import stoker

SERVED = "local paths"  # "... and file:// URIs", or "..., file://, s3://bucket/key, http://..."


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("uri")
    (d / "in.jsonl").write_text('{"text": "hello"}\n{"text": "world"}\n')
    np.save(d / "tokens.npy", np.arange(64 * 40, dtype=np.int32).reshape(64, 40))
    return d


def cli_cases(d):
    npy, jsonl = str(d / "tokens.npy"), str(d / "in.jsonl")
    loader = ["--seq-len", "16", "--batch-size", "2"]
    return [
        ("pack", jsonl, "-o", "gs://bucket/out"),
        ("pack", "gs://bucket/in.jsonl", "-o", str(d / "never")),
        ("merge", "gs://bucket/part", "-o", str(d / "merged")),
        ("merge", str(d / "part"), "-o", "gs://bucket/merged"),
        ("inspect", "gs://bucket/ds"),
        ("index", "gs://bucket/ds"),
        ("verify", "ftp://host/ds"),
        ("plan", "gs://bucket/ds", *loader),
        ("plan", "0.5:gs://bucket/ds", *loader),
        ("plan", npy, *loader, "--state", "s3://bucket/state.json"),
        ("bench", "gs://bucket/ds", *loader, "--batches", "2"),
        ("bench", npy, *loader, "--batches", "2", "--report", "s3://bucket/r.html"),
        ("doctor", "hf://datasets/x", *loader, "--train-tokens-per-s", "100"),
        ("doctor", npy, *loader, "--train-tokens-per-s", "100", "--report", "s3://b/d.html"),
        ("pack", jsonl, "-o", str(d / "tok"), "--tokenizer", "s3://bucket/tokenizer.model"),
    ]


def test_cli_refuses_unserved_schemes_everywhere(run_stoker, data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a silently created "s3:" directory would land here
    for args in cli_cases(data):
        r = run_stoker(*args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert SERVED in r.stderr, (args, r.stderr)
        assert "://" in r.stderr and "does not serve" in r.stderr, (args, r.stderr)
    leftovers = [p.name for p in tmp_path.iterdir()] + [p.name for p in data.iterdir()]
    assert not [n for n in leftovers if n.endswith(":") or n in ("never", "merged", "tok")]


def test_cli_reads_and_writes_file_uris(run_stoker, data, tmp_path):
    out = tmp_path / "ds"
    r = run_stoker("pack", f"file://{data / 'in.jsonl'}", "-o", f"file://{out}")
    assert r.returncode == 0, r.stderr
    assert (out / "manifest.json").is_file()
    r = run_stoker("inspect", f"file://{out}", "--json")
    assert r.returncode == 0, r.stderr
    r = run_stoker("plan", f"file://{data / 'tokens.npy'}", "--seq-len", "16", "--batch-size",
                   "2", "--steps", "1", "--state", f"file://{tmp_path / 'state.json'}")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "state.json").is_file()


def test_python_refuses_unserved_schemes(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = [
        lambda: stoker.Loader("gs://bucket/ds", seq_len=16, batch_size=2),
        lambda: stoker.Loader([str(data / "tokens.npy"), (0.5, "gs://b/ds")], seq_len=16,
                              batch_size=2),
        lambda: stoker.plan("gs://bucket/ds", seq_len=16, batch_size=2),
        lambda: stoker.inspect("gs://bucket/ds"),
        lambda: stoker.verify("gs://bucket/ds"),
        lambda: stoker.pack(str(data / "in.jsonl"), "gs://bucket/out"),
        lambda: stoker.pack("gs://bucket/in.jsonl", str(tmp_path / "out")),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="does not serve (gs|s3):// URIs; it serves local paths"):
            call()
    # s3:// JSONL is read where it is (test_pack_cluster_s3.py): here without credentials.
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    with pytest.raises(ValueError, match="credentials"):
        stoker.pack("s3://bucket/in.jsonl", str(tmp_path / "out"))
    assert not any(p.name.endswith(":") for p in tmp_path.iterdir())
    assert not (tmp_path / "out").exists()
    # file:// works from Python too.
    loader = stoker.Loader(f"file://{data / 'tokens.npy'}", seq_len=16, batch_size=2)
    assert len(loader) > 0 and next(iter(loader))["input_ids"].shape == (2, 16)
