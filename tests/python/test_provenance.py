"""Provenance: batch["provenance"] (stoker.Loader(..., provenance=True)) and `stoker explain` name,
for every row, the documents that fill it. Checked against the tokens of the batch: each piece's
tokens equal the document's tokens at that range, read independently — from the shards with
Megatron-LM's own IndexedDataset for the indexed path (one dataset and a mixture), and from the
JSONL line at the piece's byte offset for a stream."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import stoker

CLI = os.environ.get("STOKER_CLI", "build/stoker")


def write_jsonl(path: Path, n: int, tag: str) -> Path:
    with open(path, "w") as out:
        for i in range(n):
            words = " ".join(f"{tag}{i}w{j}" for j in range(1 + (13 * i) % 40))
            out.write(json.dumps({"text": f"[{tag} {i}] {words}"}) + "\n")
    return path


def pack(tmp_path: Path, name: str, n: int) -> Path:
    src = write_jsonl(tmp_path / f"{name}.jsonl", n, name)
    out = tmp_path / name
    subprocess.run([CLI, "pack", str(src), "-o", str(out), "--shard-size", "4KiB",
                    "--progress", "off"], check=True, capture_output=True, timeout=120)
    return out


class ShardReader:
    """The documents of a stoker dataset, read from its shards by Megatron-LM (not by stoker)."""

    def __init__(self, ds: Path):
        from megatron.core.datasets.indexed_dataset import IndexedDataset

        manifest = json.loads((ds / "manifest.json").read_text())
        self.shards = [IndexedDataset(str(ds / s["prefix"])) for s in manifest["shards"]]
        self.prefixes = [str(ds / s["prefix"]) for s in manifest["shards"]]
        self.first = np.cumsum([0] + [s["documents"] for s in manifest["shards"]])

    def tokens(self, shard: int, record: int) -> np.ndarray:
        return np.asarray(self.shards[shard][record], dtype=np.int64)


def check_pieces(batch, readers_by_source, stream_files=None):
    ids = batch["input_ids"]
    prov = batch["provenance"]
    assert len(prov) == ids.shape[0]
    pieces = 0
    for row, row_pieces in enumerate(prov):
        at = 0
        for p in row_pieces:
            assert p["row_offset"] == at
            at += p["length"]
            got = ids[row, p["row_offset"]:p["row_offset"] + p["length"]]
            if stream_files is None:
                r = readers_by_source[p["source"]]
                assert p["shard_path"] == r.prefixes[p["shard"]]
                assert p["document"] == r.first[p["shard"]] + p["record"]
                assert p["key"] is None
                doc = r.tokens(p["shard"], p["record"])
            else:
                data = stream_files[p["source"]]
                start = p["byte_offset"]
                line = data[start:data.index(b"\n", start)]
                text = json.loads(line)["text"]
                doc = np.frombuffer(text.encode(), dtype=np.uint8).astype(np.int64)
                doc = np.append(doc, 256)  # the bytes tokenizer's EOS
            want = doc[p["offset"]:p["offset"] + p["length"]]
            assert p["offset"] + p["length"] <= len(doc)
            np.testing.assert_array_equal(got, want)
            pieces += 1
        assert at <= ids.shape[1]
    return pieces


@pytest.mark.parametrize("pack_mode", ["concat", "bestfit"])
def test_provenance_names_the_tokens_of_every_piece(tmp_path, pack_mode):
    a, b = pack(tmp_path, "a", 300), pack(tmp_path, "b", 120)
    readers = {str(a): ShardReader(a), str(b): ShardReader(b)}
    assert len(readers[str(a)].shards) > 1
    for datasets in ([str(a)], [(2.0, str(a)), (1.0, str(b))]):
        loader = stoker.Loader(datasets, seq_len=64, batch_size=3, num_workers=2, pack=pack_mode,
                               rank=1, world_size=2, output="numpy", pin_memory=False,
                               provenance=True)
        pieces, sources = 0, set()
        for i, batch in enumerate(loader):
            pieces += check_pieces(batch, readers)
            sources |= {p["source"] for row in batch["provenance"] for p in row}
            if i == 20:
                break
        assert pieces > 60
        assert sources == {d if isinstance(d, str) else d[1] for d in datasets}


def test_stoker_explain_prints_the_loaders_provenance(tmp_path):
    a, b = pack(tmp_path, "a", 300), pack(tmp_path, "b", 120)
    loader = stoker.Loader([(2.0, str(a)), (1.0, str(b))], seq_len=64, batch_size=2,
                           pack="bestfit", seed=5, rank=1, world_size=3, output="numpy",
                           pin_memory=False, provenance=True)
    batches = [batch["provenance"] for _, batch in zip(range(6), loader)]
    p = subprocess.run([CLI, "explain", f"2:{a}", f"1:{b}", "--seq-len", "64", "--batch-size",
                        "2", "--pack", "bestfit", "--seed", "5", "--world-size", "3", "--rank",
                        "1", "--step", "5", "--json"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    step = json.loads(p.stdout)
    assert (step["epoch"], step["step"], step["rank"]) == (0, 5, 1)
    assert [row["pieces"] for row in step["rows"]] == batches[5]
    text = subprocess.run([CLI, "explain", str(a), "--seq-len", "64", "--batch-size", "2",
                           "--step", "0"], capture_output=True, text=True, timeout=120)
    assert text.returncode == 0 and "row 1:" in text.stdout and "shard" in text.stdout
    past = subprocess.run([CLI, "explain", str(a), "--seq-len", "64", "--batch-size", "2",
                           "--step", "100000"], capture_output=True, text=True, timeout=120)
    assert past.returncode == 2 and "past the end of epoch 0" in past.stderr


def test_stream_provenance_names_the_line_of_every_piece(tmp_path):
    paths = [write_jsonl(tmp_path / f"part-{k}.jsonl", n, f"p{k}")
             for k, n in enumerate([150, 40, 90])]
    files = {str(p): p.read_bytes() for p in paths}
    stream = stoker.Stream([str(p) for p in paths], tokenizer="bytes", shuffle_buffer=64)
    loader = stoker.Loader(stream, seq_len=64, batch_size=4, num_workers=2, pack="bestfit",
                           seed=3, rank=0, world_size=2, output="numpy", pin_memory=False,
                           provenance=True)
    pieces, first = 0, None
    for i, batch in enumerate(loader):
        pieces += check_pieces(batch, None, stream_files=files)
        if i == 2:
            first = batch["provenance"]
        if i == 15:
            break
    assert pieces > 40
    # `stoker explain --stream` gives the same step.
    p = subprocess.run([CLI, "explain", *map(str, paths), "--stream", "--tokenizer", "bytes",
                        "--shuffle-buffer", "64", "--seq-len", "64", "--batch-size", "4",
                        "--pack", "bestfit", "--seed", "3", "--world-size", "2", "--rank", "0",
                        "--step", "2", "--json"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert [row["pieces"] for row in json.loads(p.stdout)["rows"]] == first
