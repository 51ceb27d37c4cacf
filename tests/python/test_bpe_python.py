"""stoker.Tokenizer from Python: the reference's ids as lists and NumPy arrays, encode_batch on
many threads (the same ids; the GIL released), decode, errors as Python exceptions."""

import numpy as np
import pytest

import stoker
from bpe_cases import EDGE_CASES, cl100k_path, cl100k_reference, corpus_texts, random_texts
from test_py_gil import progresses

tiktoken = pytest.importorskip("tiktoken")


@pytest.fixture(scope="module")
def tok():
    return stoker.Tokenizer(cl100k_path(), pattern="cl100k")


def test_encode_list_and_numpy(tok):
    enc = cl100k_reference()
    for text in EDGE_CASES:
        want = enc.encode_ordinary(text)
        assert tok.encode(text) == want
        arr = tok.encode(text, numpy=True)
        assert arr.dtype == np.int32 and arr.tolist() == want
    assert tok.vocab_size == 100277 and tok.eos_id == 100257 and tok.kind == "tiktoken"


def test_encode_batch_equals_reference_on_many_threads(tok):
    texts = corpus_texts() + random_texts(seed=3, count=200)
    want = cl100k_reference().encode_ordinary_batch(texts)
    for threads in (1, 2, 8):
        assert tok.encode_batch(texts, num_threads=threads) == want
    arrays = tok.encode_batch(texts, num_threads=2, numpy=True)
    assert [a.tolist() for a in arrays] == want


def test_decode_round_trip_and_allow_special(tok):
    for text in corpus_texts()[:30] + EDGE_CASES:
        assert tok.decode(tok.encode(text)) == text
    special = stoker.Tokenizer(cl100k_path(), pattern="cl100k", allow_special=True)
    assert special.encode("a<|endoftext|>b") == [64, 100257, 65]
    assert special.decode([64, 100257, 65]) == "a<|endoftext|>b"
    assert tok.encode("a<|endoftext|>b") != [64, 100257, 65]


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError):
        stoker.Tokenizer(tmp_path / "missing.tiktoken", pattern="cl100k")
    with pytest.raises(ValueError, match="needs --pattern"):
        stoker.Tokenizer(cl100k_path())
    tok = stoker.Tokenizer(cl100k_path(), pattern="cl100k")
    with pytest.raises(IndexError):
        tok.decode([10**9])


def test_encode_batch_releases_the_gil(tok):
    texts = corpus_texts() * 3
    assert progresses(lambda: tok.encode_batch(texts, num_threads=1))
