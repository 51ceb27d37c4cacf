"""SentencePiece Unigram `.model` files on stoker's own encoder (src/text/sentencepiece_unigram.h),
against PyPI `sentencepiece` 0.2: models trained here in every normalization and whitespace
variant (tests/python/unigram_cases.py), with and without byte fallback, user-defined and control
pieces; ids and decode equal, ties included; the project's sample model through the CLI."""

import subprocess

import pytest

from bpe_cases import REPO, stoker_encode_many
from unigram_cases import TIE_TEXTS, VARIANTS, train_unigram, unigram_texts

spm = pytest.importorskip("sentencepiece")
stoker = pytest.importorskip("stoker")

SAMPLE = REPO / "data/sample/sample.model"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("unigram")
    return {name: train_unigram(d, name) for name in VARIANTS}


def stoker_decode(cli, tokenizer, ids):
    r = subprocess.run([cli, "tokenize", "--tokenizer", str(tokenizer), "--decode"],
                       input=" ".join(map(str, ids)).encode(), capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.mark.parametrize("name", list(VARIANTS))
def test_ids_equal_sentencepiece(models, name):
    sp = spm.SentencePieceProcessor(model_file=str(models[name]))
    tok = stoker.Tokenizer(models[name])
    assert tok.kind == "sentencepiece" and tok.vocab_size == sp.get_piece_size()
    texts = unigram_texts()
    want = sp.encode(texts)
    got = [tok.encode(t) for t in texts]
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g != w]
    assert not bad, bad[:3]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_decode_equals_sentencepiece(models, name):
    sp = spm.SentencePieceProcessor(model_file=str(models[name]))
    tok = stoker.Tokenizer(models[name])
    n = sp.get_piece_size()
    cases = [sp.encode(t) for t in unigram_texts()[-400:]]
    cases += [list(range(n)), [sp.unk_id()] * 3 + sp.encode(" x"), list(range(0, n, 7))[::-1]]
    for ids in cases:
        assert tok.decode(ids) == sp.decode(ids), ids


def test_ties_are_broken_as_sentencepiece_breaks_them(models):
    # The texts where libsentencepiece 0.1.97 chose the other split of a tie (issue 48).
    sp = spm.SentencePieceProcessor(model_file=str(models["nmt_nfkc_bytes"]))
    tok = stoker.Tokenizer(models["nmt_nfkc_bytes"])
    assert all(sp.piece_to_id(p) != sp.unk_id() for p in ("!", "!!", "-", "--", "\u2581<<"))
    # Both splits of "!!!" score the same; which one wins depends on float rounding of the path.
    assert sp.encode("!!!", out_type=str) == ["\u2581", "!", "!!"]
    assert sp.encode("x!!!", out_type=str) == ["\u2581", "x", "!!", "!"]
    for t in TIE_TEXTS:
        assert tok.encode(t) == sp.encode(t), t


def test_sample_model_through_the_cli(stoker_cli):
    sp = spm.SentencePieceProcessor(model_file=str(SAMPLE))
    texts = unigram_texts()
    assert stoker_encode_many(stoker_cli, SAMPLE, texts) == sp.encode(texts)
    ids = sp.encode("Hello  world, caf\u00e9 \u5e8a!")
    assert stoker_decode(stoker_cli, SAMPLE, ids) == sp.decode(ids)


def test_a_denormalizer_is_refused_by_name(tmp_path, models):
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(models["nmt_nfkc_bytes"].read_bytes())
    proto.denormalizer_spec.precompiled_charsmap = proto.normalizer_spec.precompiled_charsmap
    bad = tmp_path / "denorm.model"
    bad.write_bytes(proto.SerializeToString())
    with pytest.raises(ValueError, match=r"denorm\.model.*denormalizer_spec"):
        stoker.Tokenizer(bad)


REAL = {
    "test_model": ("tests/data/tokenizers/sentencepiece-test/test_model.model",
                   "4884d27bf50494e080aa99dbb868f27b68b6a3b6bd128da37ad6057c5e3cf5a2"),
    "test_ja_model": ("tests/data/tokenizers/sentencepiece-test/test_ja_model.model",
                      "e39551e7ab937745b25edf55a7399d3c78948fda1dabca6b1781df2fcec67f65"),
}


@pytest.mark.parametrize("name", list(REAL))
def test_published_unigram_models_equal_sentencepiece(name):
    """Google's own Unigram models (nfkc), byte for byte as published (sha256 checked)."""
    import hashlib

    rel, sha = REAL[name]
    path = REPO / rel
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = stoker.Tokenizer(path)
    texts = unigram_texts() + ["吾輩は猫である。名前はまだ無い。", "ｶﾀｶﾅ　全角　スペース"]
    want = sp.encode(texts)
    assert [tok.encode(t) for t in texts] == want
    for ids in want[-300:]:
        assert tok.decode(ids) == sp.decode(ids)


def long_tie_text():
    """About 660,000 characters of the suite's texts with runs of ties between them: the path's
    float score leaves [-1e5, 1e5] many times, and PyPI sentencepiece 0.2.3 rebases it to 0 each
    time (kScoreResetThreshold in unigram_model.cc); the rounding of that float subtraction
    decides ties such as "-" + "--" against "--" + "-" further on."""
    ties = " x!!! a---b <<<< -- 9999 000 ... 2222_99 rule.c utter end() "
    parts = []
    for i, t in enumerate(unigram_texts()):
        parts.append(t)
        if i % 3 == 0:
            parts.append(ties)
    return " ".join(parts) * 2


@pytest.mark.parametrize("name", ["sample"] + list(REAL))
def test_ties_on_long_texts_follow_the_score_rebasing(name):
    path = SAMPLE if name == "sample" else REPO / REAL[name][0]
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = stoker.Tokenizer(path)
    text = long_tie_text()
    assert len(text) > 600_000
    want = sp.encode(text)
    got = tok.encode(text)
    first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), len(want))
    assert got == want, (first, sp.id_to_piece(got[first:first + 4]),
                         sp.id_to_piece(want[first:first + 4]))
