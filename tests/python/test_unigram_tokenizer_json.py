"""tokenizer.json files with a Unigram model (T5's layout: Precompiled charsmap normalizer,
WhitespaceSplit + Metaspace, Metaspace decoder, an EOS template) on stoker's own encoder, against
`tokenizers`: built here from Unigram models trained with PyPI `sentencepiece`
(tests/python/unigram_cases.py); ids (with the post-processor's EOS) and decode equal."""

import pytest

from bpe_cases import stoker_encode_many
from unigram_cases import TIE_TEXTS, train_unigram, unigram_texts, unigram_tokenizer_json

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("sentencepiece")
stoker = pytest.importorskip("stoker")

NAMES = ["nmt_nfkc_bytes", "nmt_nfkc_unk", "nfkc", "nmt_nfkc_cf"]


@pytest.fixture(scope="module")
def jsons(tmp_path_factory):
    d = tmp_path_factory.mktemp("unigram_json")
    return {n: unigram_tokenizer_json(train_unigram(d, n), d / f"{n}.json") for n in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_ids_equal_tokenizers(stoker_cli, jsons, name):
    t = tokenizers.Tokenizer.from_file(str(jsons[name]))
    t.encode_special_tokens = True  # stoker's default: special tokens' text is ordinary text
    texts = unigram_texts()
    want = [e.ids for e in t.encode_batch(texts)]
    got = stoker_encode_many(stoker_cli, jsons[name], texts)
    bad = [(x, g, w) for x, g, w in zip(texts, got, want) if g != w]
    assert not bad, bad[:3]


@pytest.mark.parametrize("name", NAMES)
def test_decode_equals_tokenizers(jsons, name):
    t = tokenizers.Tokenizer.from_file(str(jsons[name]))
    tok = stoker.Tokenizer(jsons[name])
    for text in unigram_texts()[-300:] + TIE_TEXTS:
        ids = t.encode(text).ids
        assert tok.decode(ids) == t.decode(ids, skip_special_tokens=False), text


def test_model_directory_like_the_others(tmp_path, jsons):
    """A T5-style model directory (tokenizer.json + tokenizer_config.json): the config's EOS, the
    post-processor's EOS after each text, special tokens' text read as ids only when allowed."""
    import json
    import shutil

    d = tmp_path / "t5-like"
    d.mkdir()
    shutil.copy(jsons["nmt_nfkc_bytes"], d / "tokenizer.json")
    (d / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>", "unk_token": "<unk>"}))
    t = tokenizers.Tokenizer.from_file(str(d / "tokenizer.json"))
    eos = t.token_to_id("</s>")
    tok = stoker.Tokenizer(d)
    assert tok.eos_id == eos
    text = "Hello </s> world"
    t.encode_special_tokens = True
    assert tok.encode(text) == t.encode(text).ids and tok.encode(text)[-1] == eos
    t.encode_special_tokens = False
    assert stoker.Tokenizer(d, allow_special=True).encode(text) == t.encode(text).ids


def test_unsupported_unigram_fields_are_refused_by_name(tmp_path, jsons):
    import json

    j = json.loads(jsons["nfkc"].read_text())
    j["model"]["unk_id"] = None
    bad = tmp_path / "no_unk.json"
    bad.write_text(json.dumps(j))
    with pytest.raises(ValueError, match=r"no_unk\.json.*model\.unk_id"):
        stoker.Tokenizer(bad)
    j = json.loads(jsons["nfkc"].read_text())
    j["model"]["vocab"][5] = ["x"]
    bad.write_text(json.dumps(j))
    with pytest.raises(ValueError, match=r"model\.vocab\[5\]"):
        stoker.Tokenizer(bad)


def test_converter_layout_strip_and_space_runs(stoker_cli, jsons, tmp_path):
    """The layout transformers' SentencePiece converters write today (T5, Pegasus, ALBERT):
    Precompiled, Strip(right), Replace(Regex(" {2,}"), "▁") and a Metaspace pre-tokenizer that
    splits: ids and decode equal `tokenizers` on texts with runs of spaces and trailing
    White_Space (stoker refused `Strip` and a Regex pattern before)."""
    import json

    j = json.loads(jsons["nmt_nfkc_bytes"].read_text())
    j["normalizer"] = {"type": "Sequence", "normalizers": [
        j["normalizer"],
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": "\u2581"}]}
    j["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "always", "split": True}
    path = tmp_path / "converter.json"
    path.write_text(json.dumps(j))
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = True
    texts = unigram_texts()[:400] + [
        "a  b   c", "  lead", "trail  \u3000\u00a0\t", "x \u2003 y", "tab\t\tsep  ",
        "many      spaces here", "\u00a0\u00a0nbsp  runs", "end \u200b "]
    want = [e.ids for e in t.encode_batch(texts)]
    got = stoker_encode_many(stoker_cli, path, texts)
    bad = [(x, g, w) for x, g, w in zip(texts, got, want) if g != w]
    assert not bad, bad[:3]
    tok = stoker.Tokenizer(path)
    for text, ids in zip(texts[-8:], want[-8:]):
        assert tok.decode(ids) == t.decode(ids, skip_special_tokens=False), text
