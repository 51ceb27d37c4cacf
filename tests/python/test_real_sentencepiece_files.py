"""SentencePiece-style BPE on a tokenizer file as a model repository publishes it: Llama 2's
tokenizer.model (byte for byte the file of meta-llama/Llama-2-7b-hf; source, hashes and licence in
tests/data/tokenizers/README.md), through stoker's Python API and CLI, against PyPI
`sentencepiece` (ids and decode), and the tokenizer.json transformers' LlamaConverter makes of it
(the layout Llama 2's own tokenizer.json has) against `tokenizers`. The texts are the sample
corpus, the edge cases of bpe_cases.py and sp_cases.py, seeded random texts and a long text with
no space."""

import json
import shutil

import pytest

from bpe_cases import EDGE_CASES, REPO, corpus_texts, random_texts, stoker_encode_many
from sp_cases import SP_EDGE_CASES, sp_tokenizer_json

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
stoker = pytest.importorskip("stoker")

LLAMA2_MODEL = REPO / "tests/data/tokenizers/llama-2/tokenizer.model"
LLAMA2_SHA256 = "9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347"
NO_SPACE = ("abc\u00e9\u5e8a9\U0001F600" * 300_000)[:2_000_000]  # one 2M-character word


def texts():
    return corpus_texts() + EDGE_CASES + SP_EDGE_CASES + random_texts(2828, 400)


@pytest.fixture(scope="module")
def sp():
    import hashlib

    assert hashlib.sha256(LLAMA2_MODEL.read_bytes()).hexdigest() == LLAMA2_SHA256
    return spm.SentencePieceProcessor(model_file=str(LLAMA2_MODEL))


@pytest.fixture(scope="module")
def llama2_json(tmp_path_factory):
    pytest.importorskip("transformers")
    return sp_tokenizer_json(LLAMA2_MODEL, tmp_path_factory.mktemp("llama2") / "tokenizer.json",
                             "legacy")


def test_llama2_model_ids_equal_sentencepiece(sp):
    tok = stoker.Tokenizer(LLAMA2_MODEL)
    assert tok.kind == "sentencepiece" and tok.vocab_size == sp.get_piece_size() == 32000
    assert tok.eos_id == sp.eos_id() == 2
    all_texts = texts()
    want = sp.encode(all_texts)
    assert [tok.encode(t) for t in all_texts] == want
    assert tok.encode_batch(all_texts, num_workers=2) == want


def test_llama2_model_ids_equal_through_the_cli(stoker_cli, sp):
    all_texts = texts()
    assert stoker_encode_many(stoker_cli, LLAMA2_MODEL, all_texts) == sp.encode(all_texts)
    assert stoker_encode_many(stoker_cli, LLAMA2_MODEL, all_texts[:50], eos=True) == \
        [ids + [sp.eos_id()] for ids in sp.encode(all_texts[:50])]


def test_llama2_model_long_word_without_a_space(sp):
    assert stoker.Tokenizer(LLAMA2_MODEL).encode(NO_SPACE) == sp.encode(NO_SPACE)


def test_llama2_model_decode_equals_sentencepiece(sp):
    tok = stoker.Tokenizer(LLAMA2_MODEL)
    for text in texts():
        ids = sp.encode(text)
        assert tok.decode(ids) == sp.decode(ids), text
    byte = {b: sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)}
    crafted = [
        [sp.bos_id(), sp.eos_id(), sp.unk_id()] + sp.encode(" x") + [sp.unk_id(), sp.eos_id()],
        [byte[0xF0], byte[0x9F]] + sp.encode("a"),  # a truncated 4-byte character
        [byte[0xFF], byte[0x41], byte[0xC3]] + sp.encode(" \u00e9"),
        [byte[0x20], byte[0x20]] + sp.encode("\u2581"),
        [sp.piece_to_id("\u2581"), sp.piece_to_id("\u2581\u2581"), sp.piece_to_id("\u2581b")],
        [sp.bos_id(), sp.piece_to_id("\u2581a")],
        list(range(0, sp.get_piece_size(), 61)),
    ]
    for ids in crafted:
        assert tok.decode(ids, errors="replace") == sp.decode(ids), ids


def test_llama2_model_directory_takes_bos_and_eos_from_the_config(stoker_cli, sp, tmp_path):
    """A model directory: tokenizer.model beside a tokenizer_config.json in the form Llama 2's
    carries (add_bos_token, "<s>", "</s>"; written here, not the published file)."""
    shutil.copy(LLAMA2_MODEL, tmp_path / "tokenizer.model")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>",
         "unk_token": "<unk>", "tokenizer_class": "LlamaTokenizer"}), encoding="utf-8")
    some = corpus_texts()[:30] + EDGE_CASES
    want = [[1] + ids + [2] for ids in sp.encode(some)]
    assert stoker_encode_many(stoker_cli, tmp_path, some, eos=True) == want


def test_llama2_tokenizer_json_ids_equal_tokenizers(stoker_cli, llama2_json):
    ref = tokenizers.Tokenizer.from_file(str(llama2_json))
    ref.encode_special_tokens = True  # stoker's default: the text of <s> and </s> is ordinary text
    all_texts = texts() + [NO_SPACE]
    want = [e.ids for e in ref.encode_batch(all_texts, add_special_tokens=False)]
    tok = stoker.Tokenizer(llama2_json, post_processor=False)
    assert tok.encode_batch(all_texts, num_workers=2) == want
    assert stoker_encode_many(stoker_cli, llama2_json, all_texts[:200],
                              "--no-post-processor") == want[:200]
    ref.encode_special_tokens = False  # with --allow-special they are the control tokens
    want = [e.ids for e in ref.encode_batch(all_texts[:-1], add_special_tokens=False)]
    assert stoker.Tokenizer(llama2_json, allow_special=True).encode_batch(all_texts[:-1]) == want


def test_llama2_tokenizer_json_decode_equals_tokenizers(llama2_json):
    ref = tokenizers.Tokenizer.from_file(str(llama2_json))
    tok = stoker.Tokenizer(llama2_json)
    for text in texts():
        ids = ref.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), text
    byte = {b: ref.token_to_id(f"<0x{b:02X}>") for b in range(256)}
    for ids in ([byte[0xF0], byte[0x9F]] + ref.encode("a", add_special_tokens=False).ids,
                [byte[0x20], byte[0x41]] + ref.encode(" b", add_special_tokens=False).ids,
                list(range(3, 32000, 61))):
        assert tok.decode(ids, errors="replace") == ref.decode(ids, skip_special_tokens=False)


PHI3 = REPO / "tests/data/tokenizers/phi-3-mini-4k-instruct"
PHI3_SHA256 = "fd0e7eeb8f7325eaaa0a715d9759edd5d736332140d71ea667cdc3c22139bb8e"


def phi3_texts():
    """The common texts, and chat turns whose tokens strip the whitespace after them (rstrip):
    `</s>` (not special: matched in every mode) and the chat tokens (special)."""
    turns = ["<|user|>\nHow far is it?<|end|>\n<|assistant|>  About 3 km.<|end|>\n",
             "Hi</s>  there <|end|>\n<|user|> x", "<|system|>\u3000\u00a0You help.<|end|>",
             "a</s>", "</s>\t\r\n", "  </s></s>  b", "<|end|><|user|>", "x <|end|> \u200b y"]
    return texts() + turns + [t.replace("\n", " ") + "</s>" for t in corpus_texts()[:50]]


def test_phi3_tokenizer_json_ids_and_decode_equal_tokenizers(stoker_cli):
    import hashlib

    path = PHI3 / "tokenizer.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == PHI3_SHA256
    ref = tokenizers.Tokenizer.from_file(str(path))
    all_texts = phi3_texts()
    for allow in (False, True):
        ref.encode_special_tokens = not allow
        want = [e.ids for e in ref.encode_batch(all_texts, add_special_tokens=False)]
        tok = stoker.Tokenizer(path, allow_special=allow, post_processor=False)
        assert tok.encode_batch(all_texts, num_workers=2) == want, allow
        flags = ["--no-post-processor"] + (["--allow-special"] if allow else [])
        assert stoker_encode_many(stoker_cli, path, all_texts[-60:], *flags) == want[-60:]
    tok = stoker.Tokenizer(path, allow_special=True)
    for text in all_texts:
        ids = ref.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), text


def test_phi3_model_directory_takes_the_eos_from_its_config(stoker_cli):
    """The directory as the model ships it: tokenizer_config.json names `<|endoftext|>` (32000) as
    the EOS, which the CLI appends after each document."""
    config = json.loads((PHI3 / "tokenizer_config.json").read_text(encoding="utf-8"))
    ref = tokenizers.Tokenizer.from_file(str(PHI3 / "tokenizer.json"))
    eos = ref.token_to_id(config["eos_token"])
    some = corpus_texts()[:20]
    want = [e.ids + [eos] for e in ref.encode_batch(some, add_special_tokens=True)]
    assert stoker_encode_many(stoker_cli, PHI3, some, eos=True) == want
