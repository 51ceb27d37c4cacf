"""Tokenizers as model repositories ship them: a model directory's tokenizer_config.json names the
EOS (DeepSeek-V3's `<｜end▁of▁sentence｜>` is only there) and the BOS (add_bos_token of a
SentencePiece model); a file's format comes from its content (Llama 3's `original/tokenizer.model`
holds tiktoken lines); `--pattern llama3` / `llama4` name Meta's patterns for bare tiktoken files.
Each is checked against the reference library's ids."""

import json
import shutil
import subprocess

import pytest

from bpe_cases import (EDGE_CASES, LLAMA3_PATTERN, REPO, cl100k_path, corpus_texts, random_texts,
                       stoker_encode_many, train_llama3_style)

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

DS_BOS = "<｜begin▁of▁sentence｜>"
DS_EOS = "<｜end▁of▁sentence｜>"
# DeepSeek-R1-Distill's tokenizer_config.json as published (tests/data/tokenizers/README.md): its
# tokens are AddedToken objects.
DEEPSEEK_CONFIG = REPO / "tests/data/tokenizers/deepseek-r1-distill-qwen-32b/tokenizer_config.json"
O200K_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
    r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def tokenize(cli, tokenizer, text, *flags):
    r = subprocess.run([cli, "tokenize", "--tokenizer", str(tokenizer), *map(str, flags)],
                       input=text.encode(), capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


@pytest.fixture(scope="module")
def deepseek_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("deepseek")
    train_llama3_style(d / "tokenizer.json", bos=DS_BOS, eos=DS_EOS)
    return d


def test_eos_comes_from_tokenizer_config(stoker_cli, deepseek_dir, tmp_path):
    bare = tmp_path / "tokenizer.json"
    shutil.copy(deepseek_dir / "tokenizer.json", bare)
    rc, _, err = tokenize(stoker_cli, bare, "hello", "--eos-id")
    assert rc == 2 and "no end-of-text token" in err

    shutil.copy(DEEPSEEK_CONFIG, deepseek_dir / "tokenizer_config.json")
    t = tokenizers.Tokenizer.from_file(str(deepseek_dir / "tokenizer.json"))
    t.encode_special_tokens = True
    texts = corpus_texts()[:20] + EDGE_CASES
    want = [e.ids + [t.token_to_id(DS_EOS)] for e in t.encode_batch(texts)]
    for spec in (deepseek_dir, deepseek_dir / "tokenizer.json"):  # the directory or the file
        assert stoker_encode_many(stoker_cli, spec, texts, eos=True) == want
    # --eos still wins over the config.
    got = stoker_encode_many(stoker_cli, deepseek_dir, ["hi"], "--eos", DS_BOS, eos=True)
    assert got[0][-1] == t.token_to_id(DS_BOS)


def test_pack_records_the_config_eos(run_stoker, deepseek_dir, tmp_path):
    (deepseek_dir / "tokenizer_config.json").write_text(
        json.dumps({"eos_token": DS_EOS}), encoding="utf-8")  # the plain string form
    (tmp_path / "in.jsonl").write_text('{"text": "one"}\n{"text": "two"}\n', encoding="utf-8")
    run_stoker("pack", tmp_path / "in.jsonl", "-o", tmp_path / "ds", "--tokenizer", deepseek_dir)
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    t = tokenizers.Tokenizer.from_file(str(deepseek_dir / "tokenizer.json"))
    assert manifest["tokenizer"]["eos_id"] == t.token_to_id(DS_EOS)


def test_a_bad_tokenizer_config_is_one_error_naming_the_field(stoker_cli, deepseek_dir, tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    shutil.copy(deepseek_dir / "tokenizer.json", d / "tokenizer.json")
    (d / "tokenizer_config.json").write_text('{"eos_token": 5}', encoding="utf-8")
    rc, _, err = tokenize(stoker_cli, d, "x")
    assert rc == 2 and "tokenizer_config.json: eos_token" in err
    (d / "tokenizer_config.json").write_text('{"eos_token": "<nope>"}', encoding="utf-8")
    rc, _, err = tokenize(stoker_cli, d, "x", "--eos-id")
    assert rc == 2 and "<nope>" in err


def tiktoken_with(pattern, specials):
    from tiktoken.load import load_tiktoken_bpe

    return tiktoken.Encoding("test", pat_str=pattern,
                             mergeable_ranks=load_tiktoken_bpe(str(cl100k_path())),
                             special_tokens=specials)


@pytest.mark.parametrize("name,pattern,eos", [("llama3", LLAMA3_PATTERN, 128001),
                                              ("llama4", O200K_PATTERN, 200001)])
def test_tiktoken_content_named_tokenizer_model(stoker_cli, tmp_path, name, pattern, eos):
    """Llama 3 ships its tiktoken ranks as original/tokenizer.model; stoker reads the content."""
    (tmp_path / "original").mkdir()
    model = tmp_path / "original" / "tokenizer.model"
    shutil.copy(cl100k_path(), model)
    rc, _, err = tokenize(stoker_cli, model, "x")
    assert rc == 2 and "needs --pattern" in err and "llama3" in err
    texts = corpus_texts() + EDGE_CASES + random_texts(seed=28, count=100)
    enc = tiktoken_with(pattern, {})
    got = stoker_encode_many(stoker_cli, model, texts, "--pattern", name, eos=True)
    assert got == [ids + [eos] for ids in enc.encode_ordinary_batch(texts)]


def test_llama3_special_tokens_with_allow_special(stoker_cli, tmp_path):
    model = tmp_path / "tokenizer.model"
    shutil.copy(cl100k_path(), model)
    specials = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001,
                "<|start_header_id|>": 128006, "<|end_header_id|>": 128007, "<|eot_id|>": 128009,
                "<|reserved_special_token_247|>": 128255}
    text = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>" \
           "<|reserved_special_token_247|>"
    want = tiktoken_with(LLAMA3_PATTERN, specials).encode(text, allowed_special="all")
    assert stoker_encode_many(stoker_cli, model, [text], "--pattern", "llama3",
                              "--allow-special") == [want]


def test_sentencepiece_directory_takes_bos_and_eos_from_the_config(stoker_cli, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(REPO / "data/sample/sample.model"))
    shutil.copy(REPO / "data/sample/sample.model", tmp_path / "tokenizer.model")
    texts = corpus_texts()[:10] + ["Hello world"]
    plain = sp.encode(texts)
    # Without a config: no BOS, the model's EOS (as before).
    assert stoker_encode_many(stoker_cli, tmp_path, texts, eos=True) == \
        [ids + [sp.eos_id()] for ids in plain]
    # Llama 2 / Mistral 7B style: add_bos_token with the pieces named.
    other = sp.id_to_piece(10)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"add_bos_token": True, "bos_token": sp.id_to_piece(sp.bos_id()), "eos_token": other}))
    assert stoker_encode_many(stoker_cli, tmp_path, texts, eos=True) == \
        [[sp.bos_id()] + ids + [10] for ids in plain]
    assert stoker_encode_many(stoker_cli, tmp_path / "tokenizer.model", texts,
                              "--no-post-processor") == plain
