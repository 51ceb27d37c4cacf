"""A published SentencePiece Unigram `.model` on stoker's own encoder: seqio's test vocabulary
(`seqio/test_data/sentencepiece/sentencepiece.model`, the file T5's and seqio's tests encode with:
UNIGRAM, nmt_nfkc, 26 pieces, so most characters are unknown and fused into one unk), shipped in
the seqio wheel that scripts/requirements-dev-nodeps.txt pins (source and licence:
tests/data/tokenizers/README.md). Ids and decode against PyPI `sentencepiece` for the `.model`,
and against `tokenizers` for the T5-layout tokenizer.json built from it."""

import importlib.metadata

import pytest

from unigram_cases import TIE_TEXTS, unigram_texts, unigram_tokenizer_json

import sentencepiece as spm
import stoker
import tokenizers

SEQIO_MODEL = "seqio/test_data/sentencepiece/sentencepiece.model"


@pytest.fixture(scope="module")
def seqio_model():
    try:
        path = importlib.metadata.distribution("seqio").locate_file(SEQIO_MODEL)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("seqio is not installed: scripts/setup installs it "
                    "(scripts/requirements-dev-nodeps.txt)")
    assert path.is_file(), f"{path}: missing from the installed seqio wheel"
    return path


def published_texts(model):
    # The words the vocabulary was trained on (tokens.tsv beside it), then the shared cases.
    words = (model.parent / "tokens.tsv").read_text(encoding="utf-8").split()
    return [" ".join(words), *words] + unigram_texts()


def test_published_model_is_unigram(seqio_model):
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(seqio_model.read_bytes())
    assert proto.trainer_spec.model_type == pb.TrainerSpec.UNIGRAM
    assert proto.normalizer_spec.name == "nmt_nfkc" and len(proto.pieces) == 26


def test_ids_and_decode_equal_sentencepiece(seqio_model):
    sp = spm.SentencePieceProcessor(model_file=str(seqio_model))
    tok = stoker.Tokenizer(seqio_model)
    assert tok.kind == "sentencepiece" and tok.vocab_size == sp.get_piece_size() == 26
    texts = published_texts(seqio_model)
    want = sp.encode(texts)
    got = [tok.encode(t) for t in texts]
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g != w]
    assert not bad, bad[:3]
    assert any(sp.unk_id() in ids for ids in want)  # unknown runs are exercised
    for ids in want[:200] + [list(range(26)), [2, 2, 5, 2]]:
        assert tok.decode(ids) == sp.decode(ids), ids


def test_tokenizer_json_equals_tokenizers(stoker_cli, seqio_model, tmp_path):
    from bpe_cases import stoker_encode_many

    path = unigram_tokenizer_json(seqio_model, tmp_path / "seqio.json")
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = True
    texts = published_texts(seqio_model)
    want = [e.ids for e in t.encode_batch(texts)]
    got = stoker_encode_many(stoker_cli, path, texts)
    bad = [(x, g, w) for x, g, w in zip(texts, got, want) if g != w]
    assert not bad, bad[:3]
    tok = stoker.Tokenizer(path)
    for text in texts[:100] + TIE_TEXTS:
        ids = t.encode(text).ids
        assert tok.decode(ids) == t.decode(ids, skip_special_tokens=False), text
