"""Shards written by `stoker pack` read by megatron-core's own IndexedDataset, and byte-identical
to what megatron-core's IndexedDatasetBuilder writes for the same documents."""
import json
import warnings

import numpy as np
import pytest

from test_pack import SAMPLE, bytes_doc, pack, read_dataset, run

torch = pytest.importorskip("torch")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    indexed = pytest.importorskip("megatron.core.datasets.indexed_dataset")

TEXTS = [json.loads(line)["text"] for line in open(SAMPLE / "corpus.jsonl", encoding="utf-8")]


def megatron_documents(directory):
    """Reads every shard of our dataset with megatron-core; returns (documents, datasets)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    docs = []
    for shard in manifest["shards"]:
        ds = indexed.IndexedDataset(str(directory / shard["prefix"]))
        assert len(ds) == shard["documents"]
        assert ds.document_indices.tolist() == list(range(len(ds) + 1))
        assert int(ds.sequence_lengths.sum()) == shard["tokens"]
        docs += [ds[i].astype(np.int64).tolist() for i in range(len(ds))]
    return manifest, docs


@pytest.mark.parametrize("tokenizer,dtype", [("bytes", "auto"), ("bytes", "int32"),
                                             ("sentencepiece", "auto")])
def test_megatron_reads_our_shards(tmp_path, tokenizer, dtype):
    if tokenizer == "sentencepiece":
        spm = pytest.importorskip("sentencepiece")
        sp = spm.SentencePieceProcessor(model_file=str(SAMPLE / "sample.model"))
        expected = [ids + [sp.eos_id()] for ids in sp.encode(TEXTS)]
        flag = str(SAMPLE / "sample.model")
    else:
        expected = [bytes_doc(t) for t in TEXTS]
        flag = "bytes"
    out = tmp_path / "out"
    pack(SAMPLE / "corpus.jsonl", "-o", out, "--tokenizer", flag, "--dtype", dtype,
         "--shard-size", "128KiB")
    manifest, docs = megatron_documents(out)
    assert len(manifest["shards"]) > 1
    want = np.int32 if dtype == "int32" else np.uint16
    ds = indexed.IndexedDataset(str(out / manifest["shards"][0]["prefix"]))
    assert ds.index.dtype == want
    assert docs == expected


def test_merged_dataset_shards_read_by_megatron(tmp_path):
    for task in range(3):
        pack(SAMPLE / "corpus.jsonl", SAMPLE / "SOURCES.md", "-o", tmp_path / "all",
             "--task-index", task, "--task-count", 3, "--shard-size", "64KiB")
    p = run("merge", tmp_path / "all")
    assert p.returncode == 0, p.stderr
    _, docs = megatron_documents(tmp_path / "all")
    assert docs == read_dataset(tmp_path / "all")[1]
    assert docs[:len(TEXTS)] == [bytes_doc(t) for t in TEXTS]


def test_byte_identical_to_megatron_builder(tmp_path):
    out = tmp_path / "ours"
    pack(SAMPLE / "corpus.jsonl", "-o", out)
    builder = indexed.IndexedDatasetBuilder(str(tmp_path / "theirs.bin"), dtype=np.uint16)
    for text in TEXTS:
        builder.add_item(torch.tensor(bytes_doc(text), dtype=torch.int64))
        builder.end_document()
    builder.finalize(str(tmp_path / "theirs.idx"))
    assert (out / "part-00000-00000.bin").read_bytes() == (tmp_path / "theirs.bin").read_bytes()
    assert (out / "part-00000-00000.idx").read_bytes() == (tmp_path / "theirs.idx").read_bytes()
