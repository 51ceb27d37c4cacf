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
