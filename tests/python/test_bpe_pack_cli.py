"""`stoker pack` and `stoker tokenize` with byte-level BPE: the shards hold tiktoken's /
tokenizers' ids plus EOS, identical for --threads 1/2/8; the manifest names the tokenizer; every
bad tokenizer file is one clear message naming the file (and line or field), exit 2."""

import json

import pytest

from bpe_cases import cl100k_path, cl100k_reference, corpus_texts, train_llama3_style
from test_pack import pack, read_dataset, run, tree_bytes, write_jsonl

tiktoken = pytest.importorskip("tiktoken")


def test_pack_with_tiktoken_matches_reference_for_any_thread_count(tmp_path):
    texts = corpus_texts()[:150]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    outs = []
    for threads in (1, 2, 8):
        out = tmp_path / f"ds{threads}"
        pack(src, "-o", out, "--tokenizer", cl100k_path(), "--pattern", "cl100k",
             "--num-workers", threads, "--shard-size", "64KiB")
        outs.append(out)
    assert tree_bytes(outs[0]) == tree_bytes(outs[1]) == tree_bytes(outs[2])
    manifest, docs = read_dataset(outs[0])
    enc = cl100k_reference()
    assert docs == [enc.encode_ordinary(t) + [100257] for t in texts]
    tok = manifest["tokenizer"]
    assert tok["kind"] == "tiktoken"
    assert tok["eos_id"] == 100257
    assert tok["vocab_size"] == 100277
    assert tok["name"].startswith("cl100k_base.tiktoken pattern=cl100k")
    assert len(tok["checksum"]) == 16
    assert manifest["dtype"] == "int32"


def test_pack_with_tokenizer_json_and_eos_override(tmp_path):
    tj = train_llama3_style(tmp_path / "tokenizer.json")
    texts = corpus_texts()[:40]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    pack(src, "-o", tmp_path / "ds", "--tokenizer", tmp_path, "--num-workers", 2)
    manifest, docs = read_dataset(tmp_path / "ds")
    import tokenizers

    ref = tokenizers.Tokenizer.from_file(str(tj))
    ref.encode_special_tokens = True
    eos = ref.token_to_id("<|end_of_text|>")
    assert manifest["tokenizer"]["eos_id"] == eos
    assert manifest["tokenizer"]["kind"] == "tokenizer.json"
    assert docs == [ref.encode(t).ids + [eos] for t in texts]  # BOS from the template, then EOS
    pack(src, "-o", tmp_path / "ds2", "--tokenizer", tj, "--eos", "<|begin_of_text|>",
         "--no-post-processor")
    manifest2, docs2 = read_dataset(tmp_path / "ds2")
    bos = ref.token_to_id("<|begin_of_text|>")
    assert manifest2["tokenizer"]["eos_id"] == bos
    assert docs2 == [ref.encode(t, add_special_tokens=False).ids + [bos] for t in texts]


def test_merge_refuses_datasets_of_different_tokenizers(tmp_path):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, ["one document", "two documents"])
    pack(src, "-o", tmp_path / "a", "--tokenizer", cl100k_path(), "--pattern", "cl100k")
    pack(src, "-o", tmp_path / "b", "--tokenizer", cl100k_path(), "--pattern", "cl100k",
         "--allow-special")
    r = run("merge", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "m")
    assert r.returncode == 2
    assert "tokenizer" in r.stderr and "allow-special" in r.stderr


def test_tokenize_cli_matches_reference_and_decodes():
    import subprocess

    from test_pack import STOKER

    text = "Hello, world! 你好 <|endoftext|>\r\n"
    args = [STOKER, "tokenize", "--tokenizer", str(cl100k_path()), "--pattern", "cl100k",
            "--allow-special"]
    enc = subprocess.run(args, input=text.encode(), capture_output=True, timeout=60)
    assert enc.returncode == 0, enc.stderr
    ids = [int(x) for x in enc.stdout.split()]
    assert ids == cl100k_reference().encode(text, allowed_special="all")
    dec = subprocess.run(args + ["--decode"], input=enc.stdout, capture_output=True, timeout=60)
    assert dec.returncode == 0 and dec.stdout.decode() == text
    bad = subprocess.run(args + ["--decode"], input=b"1 2 x", capture_output=True, timeout=60)
    assert bad.returncode == 2 and b"expected token ids" in bad.stderr


def bad_tiktoken(tmp_path, lines, name="bad.tiktoken"):
    good = cl100k_path().read_text().splitlines()[:256]
    p = tmp_path / name
    p.write_text("\n".join(good + lines) + "\n")
    return p


def llama_json(tmp_path):
    return json.loads(train_llama3_style(tmp_path / "t.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", [
    "truncated_json", "unknown_merge_token", "wordpiece", "bad_base64", "duplicate_rank",
    "bad_pattern", "vocab_too_big", "missing_pattern", "unknown_normalizer",
])
def test_bad_tokenizer_files_exit_2_with_a_clear_message(tmp_path, case):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, ["text"])
    extra = []
    if case in ("truncated_json", "unknown_merge_token", "wordpiece", "unknown_normalizer"):
        j = llama_json(tmp_path)
        path = tmp_path / "tokenizer.json"
        if case == "truncated_json":
            path.write_text(json.dumps(j)[:5000])
            want = "not valid JSON at byte"
        elif case == "unknown_merge_token":
            j["model"]["merges"][7] = ["nosuchtoken", j["model"]["merges"][7][1]]
            path.write_text(json.dumps(j))
            want = "model.merges[7]: the token 'nosuchtoken' is not in model.vocab"
        elif case == "wordpiece":
            j["model"]["type"] = "WordPiece"
            path.write_text(json.dumps(j))
            want = "model.type: 'WordPiece' is not supported"
        else:
            j["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"},
                                                                    {"type": "Lowercase"}]}
            path.write_text(json.dumps(j))
            want = "normalizer.normalizers[1]"
    else:
        extra = ["--pattern", "cl100k"]
        if case == "bad_base64":
            path = bad_tiktoken(tmp_path, ["@@@ 300"])
            want = "bad.tiktoken:257: the token '@@@' is not valid base64"
        elif case == "duplicate_rank":
            path = bad_tiktoken(tmp_path, ["YWI= 255"])
            want = "bad.tiktoken:257: duplicate rank 255 (first on line 256)"
        elif case == "bad_pattern":
            path = bad_tiktoken(tmp_path, [])
            extra = ["--pattern", r"(\p{L}+", "--special", "<|endoftext|>=300"]
            want = "does not compile"
        elif case == "vocab_too_big":
            path = bad_tiktoken(tmp_path, ["YWI= 2147483648"])
            want = "bad.tiktoken:257: rank 2147483648 does not fit a 32-bit token id"
        else:
            path = bad_tiktoken(tmp_path, [])
            extra = []
            want = "needs --pattern"
    for cmd in (["pack", src, "-o", tmp_path / "ds"], ["tokenize"]):
        r = run(*cmd, "--tokenizer", path, *extra)  # fails before tokenize reads stdin
        assert r.returncode == 2, (case, r.stderr)
        assert str(path) in r.stderr, r.stderr
        assert want in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
