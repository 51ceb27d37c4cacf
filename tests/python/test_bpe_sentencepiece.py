"""SentencePiece-style BPE on stoker's own engine, against the reference libraries on real files
(tests/python/sp_cases.py): Mistral 7B's SentencePiece `.model` files (ids and decode equal to PyPI
`sentencepiece`), and the tokenizer.json transformers makes of them (byte_fallback, Prepend /
Replace / Strip normalizers, Metaspace in each prepend_scheme and its old form, ByteFallback / Fuse /
Strip / Metaspace decoders: ids and decode equal to `tokenizers`)."""

import json
import subprocess

import pytest

from bpe_cases import EDGE_CASES, corpus_texts, random_texts, stoker_encode_many
from sp_cases import SP_EDGE_CASES, mistral_model, sp_tokenizer_json
from test_pack import pack, read_dataset, write_jsonl

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

VARIANTS = ["legacy", "first", "always_split", "old_metaspace", "never", "gemma5", "strip",
            "strip_nfc", "replace_strip"]


def all_texts():
    return corpus_texts() + EDGE_CASES + SP_EDGE_CASES + random_texts(28, 300)


def stoker_decode(cli, tokenizer, ids):
    r = subprocess.run([cli, "tokenize", "--tokenizer", str(tokenizer), "--decode"],
                       input=" ".join(map(str, ids)).encode(), capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.fixture(scope="module")
def jsons(tmp_path_factory):
    d = tmp_path_factory.mktemp("spjson")
    return {(v, variant): sp_tokenizer_json(mistral_model(v), d / f"{v}-{variant}.json", variant)
            for v in ("v1", "v3") for variant in VARIANTS}


@pytest.mark.parametrize("version", ["v1", "v3"])
def test_model_file_matches_sentencepiece(stoker_cli, version):
    model = mistral_model(version)
    sp = spm.SentencePieceProcessor(model_file=str(model))
    texts = all_texts()
    assert stoker_encode_many(stoker_cli, model, texts) == sp.encode(texts)
    # EOS as pack appends it, and the model's own EOS id.
    assert stoker_encode_many(stoker_cli, model, ["hi"], eos=True) == [sp.encode("hi") + [2]]


@pytest.mark.parametrize("version", ["v1", "v3"])
def test_model_file_decode_matches_sentencepiece(stoker_cli, version):
    model = mistral_model(version)
    sp = spm.SentencePieceProcessor(model_file=str(model))
    n = sp.get_piece_size()
    byte = {b: sp.piece_to_id(f"<0x{b:02X}>") for b in range(256)}
    cases = [
        sp.encode("  Hello  world, caf\u00e9 \U00020000 \U0001F9D1\u200D\U0001F9AF!"),
        [1, 2] + sp.encode(" x") + [0, 0] + sp.encode("y"),  # control, unk
        [byte[0xE2], byte[0x96]] + sp.encode("a"),  # a truncated character: U+FFFD per byte
        [byte[0x41], byte[0xFF], byte[0xC3], byte[0xA9]] + sp.encode(" b"),
        [sp.piece_to_id("\u2581\u2581"), sp.piece_to_id("\u2581a")],  # one leading ▁ only
        [sp.piece_to_id("\u2581")] * 3,
        [1, sp.piece_to_id("\u2581a")],
        [byte[0x20], sp.piece_to_id("\u2581a")],
        list(range(0, n, 97)),
    ]
    for ids in cases:
        assert stoker_decode(stoker_cli, model, ids) == sp.decode(ids), ids


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("version", ["v1", "v3"])
def test_tokenizer_json_matches_tokenizers(stoker_cli, jsons, version, variant):
    path = jsons[(version, variant)]
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = True  # stoker's default: special tokens' text is ordinary text
    texts = all_texts()
    want = [e.ids for e in t.encode_batch(texts)]
    assert stoker_encode_many(stoker_cli, path, texts) == want
    t.encode_special_tokens = False
    want = [e.ids for e in t.encode_batch(texts)]
    assert stoker_encode_many(stoker_cli, path, texts, "--allow-special") == want


@pytest.mark.parametrize("variant", VARIANTS)
def test_tokenizer_json_decode_matches_tokenizers(stoker_cli, jsons, variant):
    path = jsons[("v1", variant)]
    t = tokenizers.Tokenizer.from_file(str(path))
    byte = {b: t.token_to_id(f"<0x{b:02X}>") for b in range(256)}
    cases = [
        t.encode("  Hello  world, caf\u00e9 \U00020000 \U0001F9D1\u200D\U0001F9AF!").ids,
        [1] + t.encode(" x").ids + [0, 2],
        [byte[0xE2], byte[0x96]] + t.encode("a").ids,
        [byte[0x20], byte[0x41]] + t.encode(" b").ids,
        [t.token_to_id("\u2581\u2581"), t.token_to_id("\u2581a")],
        list(range(3, 32000, 101)),
    ]
    for ids in cases:
        assert stoker_decode(stoker_cli, path, ids) == t.decode(ids, skip_special_tokens=False)


def test_two_megabytes_without_a_space(stoker_cli, jsons, tmp_path):
    """No pre-tokenizer splits this: one 2 MB word, merged by the heap in O(n log n) (stoker takes under a second)."""
    model = mistral_model("v1")
    sp = spm.SentencePieceProcessor(model_file=str(model))
    text = ("abc\u00e9\u5e8a" * 700_000)[:2_000_000]
    assert stoker_encode_many(stoker_cli, model, [text]) == [sp.encode(text)]
    t = tokenizers.Tokenizer.from_file(str(jsons[("v1", "legacy")]))
    assert stoker_encode_many(stoker_cli, jsons[("v1", "legacy")], [text]) == [t.encode(text).ids]


@pytest.mark.parametrize("policy", ["replace", "skip", "fail"])
def test_invalid_utf8_under_each_policy(tmp_path, policy):
    model = mistral_model("v1")
    sp = spm.SentencePieceProcessor(model_file=str(model))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "ok fine"}\n{"text": "caf\xe9 au \xff\xfe lait"}\n')
    out = tmp_path / "out"
    args = [bad, "-o", out, "--tokenizer", model, "--utf8", policy]
    if policy == "fail":
        from test_pack import run
        assert run("pack", "--progress", "off", *args).returncode == 2
        return
    pack(*args)
    _, docs = read_dataset(out)
    want = [sp.encode("ok fine") + [2]]
    if policy == "replace":
        want.append(sp.encode(b"caf\xe9 au \xff\xfe lait".decode("utf-8", "replace")) + [2])
    assert docs == want


def test_pack_ids_equal_for_any_thread_count(tmp_path):
    model = mistral_model("v3")
    sp = spm.SentencePieceProcessor(model_file=str(model))
    texts = corpus_texts()[:120]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    for threads in (1, 2):
        pack(src, "-o", tmp_path / f"ds{threads}", "--tokenizer", model, "--num-workers", threads)
        manifest, docs = read_dataset(tmp_path / f"ds{threads}")
        assert docs == [ids + [2] for ids in sp.encode(texts)]
        assert manifest["tokenizer"]["kind"] == "sentencepiece"


def test_unigram_model_still_uses_the_library(stoker_cli):
    from bpe_cases import REPO
    model = REPO / "data/sample/sample.model"  # Unigram with a charsmap
    sp = spm.SentencePieceProcessor(model_file=str(model))
    texts = corpus_texts()[:30] + EDGE_CASES
    assert stoker_encode_many(stoker_cli, model, texts) == sp.encode(texts)


@pytest.mark.parametrize("name", ["bpe_byte_fallback.model", "bpe_unk.model"])
def test_small_trained_models_match_sentencepiece(stoker_cli, name):
    """The fuzzer's seeds: user-defined "[X]" and byte fallback; no byte fallback (a run of
    unknown characters is one unk) with remove_extra_whitespaces."""
    from bpe_cases import REPO
    model = REPO / "fuzz/seeds/sentencepiece_model" / name
    sp = spm.SentencePieceProcessor(model_file=str(model))
    texts = all_texts() + ["[X]the [X] fox[X][X]", "  x   y  ", "\u2581 \u2581"]
    assert stoker_encode_many(stoker_cli, model, texts) == sp.encode(texts)
    for text in texts[:40] + texts[-3:]:
        ids = sp.encode(text)
        assert stoker_decode(stoker_cli, model, ids) == sp.decode(ids), text
