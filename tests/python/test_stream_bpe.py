"""stoker.Stream with byte-level BPE (a cl100k .tiktoken file with pattern=, a tokenizer.json):
the streamed documents' ids equal `stoker pack`'s with the same tokenizer, as a multiset of
documents, and `stoker bench --stream --tokenizer X --pattern P` runs."""

import collections
import json

import pytest

import stoker
from bpe_cases import cl100k_path, corpus_texts, train_llama3_style
from test_pack import pack, read_dataset, write_jsonl

pytest.importorskip("tiktoken")


def streamed_documents(path, tokenizer, **kw):
    stream = stoker.Stream([str(path)], tokenizer=str(tokenizer), shuffle_buffer=16, **kw)
    loader = stoker.Loader(stream, seq_len=4096, batch_size=2, num_workers=2, pack="pad",
                           seed=1, output="numpy", rank=0, world_size=1, pin_memory=False,
                           segment_ids=True)
    out = collections.Counter()
    for b in loader:
        for row, seg in zip(b["input_ids"], b["segment_ids"]):
            out[tuple(row[seg > 0].tolist())] += 1
    return out


def packed_documents(src, out, *args):
    pack(src, "-o", out, *args)
    return collections.Counter(tuple(d) for d in read_dataset(out)[1])


def test_tiktoken_stream_ids_equal_pack(tmp_path):
    texts = corpus_texts()[:120]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    expected = packed_documents(src, tmp_path / "ds", "--tokenizer", cl100k_path(),
                                "--pattern", "cl100k")
    assert sum(expected.values()) == 120
    assert streamed_documents(src, cl100k_path(), pattern="cl100k") == expected
    with pytest.raises(ValueError, match="pattern"):
        streamed_documents(src, cl100k_path())  # a .tiktoken file needs its pattern


def test_tokenizer_json_stream_ids_equal_pack(tmp_path):
    tj = train_llama3_style(tmp_path / "tokenizer.json")
    texts = corpus_texts()[:60]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    expected = packed_documents(src, tmp_path / "ds", "--tokenizer", tj)
    assert streamed_documents(src, tj) == expected


def test_bench_stream_with_a_tiktoken_file(tmp_path, run_stoker):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, corpus_texts()[:200])
    p = run_stoker("bench", "--stream", src, "--tokenizer", cl100k_path(), "--pattern", "cl100k",
                   "--seq-len", "128", "--batch-size", "2", "--pack", "bestfit", "--num-workers", "2",
                   "--shuffle-buffer", "50", "--batches", "10", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["batches"] == 10


def test_explain_stream_with_a_tiktoken_file_names_the_loaders_pieces(tmp_path, run_stoker):
    # `stoker explain --stream` takes the BPE flags (--pattern ...) that bench has: its pieces are
    # the loader's, and each piece's tokens are those of the line at its byte offset.
    src = tmp_path / "in.jsonl"
    write_jsonl(src, corpus_texts()[:150])
    stream = stoker.Stream([str(src)], tokenizer=cl100k_path(), pattern="cl100k",
                           shuffle_buffer=32)
    loader = stoker.Loader(stream, seq_len=128, batch_size=2, num_workers=2, pack="bestfit",
                           seed=4, rank=0, world_size=1, output="numpy", pin_memory=False,
                           provenance=True)
    want = None
    for i, b in enumerate(loader):
        if i == 3:
            want, ids = b["provenance"], b["input_ids"].copy()
            break
    loader.close()
    p = run_stoker("explain", src, "--stream", "--tokenizer", cl100k_path(), "--pattern", "cl100k",
                   "--shuffle-buffer", "32", "--seq-len", "128", "--batch-size", "2", "--pack",
                   "bestfit", "--seed", "4", "--step", "3", "--json")
    assert p.returncode == 0, p.stderr
    got = [row["pieces"] for row in json.loads(p.stdout)["rows"]]
    assert got == want
    tok = stoker.Tokenizer(cl100k_path(), pattern="cl100k")
    data = src.read_bytes()
    for r, row in enumerate(got):
        for piece in row:
            line = data[piece["byte_offset"]:data.index(b"\n", piece["byte_offset"])]
            doc = list(tok.encode(json.loads(line)["text"])) + [tok.eos_id]
            a, n = piece["offset"], piece["length"]
            at = piece["row_offset"]
            assert ids[r][at:at + n].tolist() == doc[a:a + n]
    # Without --pattern a .tiktoken file is refused, naming the flag (exit 2: bad input).
    p = run_stoker("explain", src, "--stream", "--tokenizer", cl100k_path(), "--seq-len", "128",
                   "--batch-size", "2", "--step", "0")
    assert p.returncode == 2 and "pattern" in p.stderr, p.stderr
