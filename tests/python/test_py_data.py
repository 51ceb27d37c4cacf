"""Shared data and reference helpers for the stoker Python package tests (test_py_*.py).

Datasets are small stoker datasets made with stoker.pack from generated JSONL (documents of
random lengths), and a 2-D .npy. The reference batches are rebuilt from the plan (`stoker plan
--json` or stoker.plan) and the documents' tokens, independently of the C++ loader.
"""

import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stoker

PYTHON = sys.executable


def torchrun_env_and_port():
    """For a torchrun child: this environment with OMP_NUM_THREADS=1 and without an outer
    torchrun's rank variables, and a free port for its master."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return env, sock.getsockname()[1]


def write_jsonl(path: Path, num_docs: int, seed: int, alphabet: str, max_len: int = 300) -> None:
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(num_docs):
            n = rng.randint(1, max_len)
            f.write(json.dumps({"text": "".join(rng.choice(alphabet) for _ in range(n))}) + "\n")


def make_dataset(root: Path, name: str, num_docs: int, seed: int, alphabet: str) -> str:
    src = root / f"{name}.jsonl"
    write_jsonl(src, num_docs, seed, alphabet)
    out = root / name
    stoker.pack([src], out, "bytes", num_workers=2, shard_size="8KiB")
    return str(out)


def read_documents(path: str) -> list:
    n = stoker.inspect(path)["documents"]
    return [np.array(stoker.inspect(path, document=i), dtype=np.int64) for i in range(n)]


def reference_batch(plan_batch: dict, docs: list, seq_len: int, pad_token_id: int = 0) -> dict:
    """The tensors docs/loader.md specifies for one plan batch, built in NumPy."""
    rows = plan_batch["rows"]
    b = len(rows)
    input_ids = np.full((b, seq_len), pad_token_id, np.int64)
    labels = np.full((b, seq_len), -100, np.int64)
    position_ids = np.zeros((b, seq_len), np.int64)
    segment_ids = np.zeros((b, seq_len), np.int64)
    cu = [0]
    for r, pieces in enumerate(rows):
        at = 0
        for seg, (dataset, document, offset, length) in enumerate(pieces, start=1):
            doc = docs[dataset][document]
            input_ids[r, at:at + length] = doc[offset:offset + length]
            nxt = doc[offset + 1:offset + length + 1]
            labels[r, at:at + len(nxt)] = nxt
            position_ids[r, at:at + length] = np.arange(length)
            segment_ids[r, at:at + length] = seg
            at += length
            cu.append(r * seq_len + at)
        if at < seq_len:
            cu.append((r + 1) * seq_len)
    return {"input_ids": input_ids, "labels": labels, "position_ids": position_ids,
            "segment_ids": segment_ids, "cu_seqlens": np.array(cu, np.int32)}


def assert_batch_equal(batch: dict, ref: dict) -> None:
    for name, want in ref.items():
        got = batch[name]
        got = got.numpy() if hasattr(got, "numpy") else got
        np.testing.assert_array_equal(got, want, err_msg=name)


def cli_plan(cli: str, args: list) -> list:
    out = subprocess.run([cli, "plan", *map(str, args), "--json"], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture(scope="session")
def datasets(tmp_path_factory):
    """Two stoker datasets with disjoint token ranges (a: 'a'..'m', b: digits) and their docs."""
    root = tmp_path_factory.mktemp("py_data")
    a = make_dataset(root, "web", 160, seed=1, alphabet="abcdefghijklm")
    b = make_dataset(root, "code", 60, seed=2, alphabet="0123456789")
    return {"a": a, "b": b, "docs_a": read_documents(a), "docs_b": read_documents(b),
            "root": root}


def test_reference_helper_matches_a_hand_made_row():
    docs = [[np.array([5, 6, 7]), np.array([8, 9])]]
    ref = reference_batch({"rows": [[(0, 0, 1, 2), (0, 1, 0, 2)]]}, docs, seq_len=6)
    np.testing.assert_array_equal(ref["input_ids"], [[6, 7, 8, 9, 0, 0]])
    np.testing.assert_array_equal(ref["labels"], [[7, -100, 9, -100, -100, -100]])
    np.testing.assert_array_equal(ref["position_ids"], [[0, 1, 0, 1, 0, 0]])
    np.testing.assert_array_equal(ref["segment_ids"], [[1, 1, 2, 2, 0, 0]])
    np.testing.assert_array_equal(ref["cu_seqlens"], [0, 2, 4, 6])
