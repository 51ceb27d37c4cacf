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
        assert tok.encode_batch(texts, num_workers=threads) == want
    arrays = tok.encode_batch(texts, num_workers=2, numpy=True)
    assert [a.tolist() for a in arrays] == want


def test_list_output_shares_one_int_per_id_and_outlives_the_tokenizer():
    # Lists hold the tokenizer's cached ints (one object per id, not one per token); they stay
    # valid after the tokenizer and the other results are gone.
    import gc
    import sys

    t = stoker.Tokenizer(cl100k_path(), pattern="cl100k")
    text = " hello world, hello world"
    a, b = t.encode(text), t.encode_batch([text, text], num_workers=2)
    assert a == b[0] == b[1] == cl100k_reference().encode_ordinary(text)
    assert a[1] > 256 and a[1] is b[0][1] is b[1][1]
    before = sys.getrefcount(a[1])
    del b
    assert sys.getrefcount(a[1]) <= before - 2  # the two lists let go of theirs
    del t
    gc.collect()
    assert a == cl100k_reference().encode_ordinary(text) and type(a[1]) is int


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
    assert progresses(lambda: tok.encode_batch(texts, num_workers=1))


def test_encode_batch_chunks_small_and_empty_texts_and_repeats(tok):
    # Thousands of tiny texts (many per chunk), empty ones, and one large one, several calls in a
    # row (the pool's threads are reused): always the reference's ids in input order.
    enc = cl100k_reference()
    texts = [t for t in random_texts(seed=11, count=3000)] + ["", "x" * 200_000, ""] + EDGE_CASES
    want = enc.encode_ordinary_batch(texts)
    for threads in (1, 2, 3, 2):
        assert tok.encode_batch(texts, num_workers=threads) == want
    assert tok.encode_batch([], num_workers=2) == []
    assert tok.encode_batch((t for t in ["a b", "c"]), num_workers=2) == [[64, 293], [66]]


def test_encode_batch_bad_items(tok):
    with pytest.raises(TypeError, match="text 1 is not a str"):
        tok.encode_batch(["ok", b"bytes"], num_workers=2)
    with pytest.raises(UnicodeEncodeError):
        tok.encode_batch(["ok", "lone \ud800 surrogate"], num_workers=2)


def test_pack_from_python_with_bpe_options(tmp_path):
    from test_pack import read_dataset, write_jsonl

    enc = cl100k_reference()
    texts = corpus_texts()[:60] + ["a special <|endoftext|> in text", "digits 1234567 and CRLF\r\n"]
    src = tmp_path / "in.jsonl"
    write_jsonl(src, texts)
    cl100k = str(cl100k_path())
    r = stoker.pack(src, tmp_path / "plain", tokenizer=cl100k, pattern="cl100k", num_workers=2)
    manifest, docs = read_dataset(tmp_path / "plain")
    assert docs == [enc.encode_ordinary(t) + [100257] for t in texts]
    assert r["manifest"]["tokenizer"]["eos_id"] == 100257

    stoker.pack(src, tmp_path / "special", tokenizer=cl100k, pattern="cl100k",
                allow_special=True, eos="<|endofprompt|>")
    manifest, docs = read_dataset(tmp_path / "special")
    assert docs == [enc.encode(t, allowed_special="all") + [100276] for t in texts]
    assert manifest["tokenizer"]["eos_id"] == 100276

    # A regex pattern with a special set of its own: tiktoken built with the same.
    import tiktoken

    pat = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    ref = tiktoken.Encoding("custom", pat_str=pat, mergeable_ranks=enc._mergeable_ranks,
                            special_tokens={"<|stop|>": 100300})
    stoker.pack(src, tmp_path / "regex", tokenizer=cl100k, pattern=pat,
                special="<|stop|>=100300", eos=100300)
    manifest, docs = read_dataset(tmp_path / "regex")
    assert docs == [ref.encode_ordinary(t) + [100300] for t in texts]

    with pytest.raises(ValueError, match="pattern"):
        stoker.pack(src, tmp_path / "nopattern", tokenizer=cl100k)


def test_encode_batch_from_several_python_threads_at_once(tok):
    import threading

    texts = corpus_texts()[:200]
    want = cl100k_reference().encode_ordinary_batch(texts)
    results, errors = [], []

    def call():
        try:
            for _ in range(3):
                results.append(tok.encode_batch(texts, num_workers=2, numpy=True))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 12
    assert all([a.tolist() for a in r] == want for r in results)


def test_encode_batch_lists_equal_encode_in_order_on_1_2_8_threads(tok):
    # Distinct texts (a numbered prefix each, so a text out of place shows), empty ones between
    # them, tiny and large ones: the lists equal one encode per text, in input order, and are
    # real lists that the cyclic GC tracks again (they are built untracked).
    import gc

    base = corpus_texts()[:300] + random_texts(seed=21, count=400) + EDGE_CASES
    texts = []
    for i, t in enumerate(base):
        texts.append(f"{i} {t}")
        if i % 7 == 0:
            texts.append("")
    texts.append("y" * 300_000)
    want = [tok.encode(t) for t in texts]
    assert [] in want
    for threads in (1, 2, 8):
        got = tok.encode_batch(texts, num_workers=threads)
        assert got == want
        assert all(type(g) is list and gc.is_tracked(g) for g in got)
        assert got[0][0] == tok.encode("0")[0] and got[-1] == want[-1]


def test_encode_batch_lists_hold_exactly_one_reference_per_item(tok):
    # The lists' items are filled without the GIL and their references added per id in one
    # pass: each cached int gains exactly one reference per occurrence, and loses them again
    # when the lists go (ids above 256: Python's own small ints are shared with everything).
    import sys
    from collections import Counter

    texts = corpus_texts()[:200] + ["hello hello hello", ""] * 50
    first = tok.encode_batch(texts, num_workers=2)
    counts = Counter(v for ids in first for v in ids)  # the same per call
    objs = {v: v for v in counts if v > 256}  # the cached ints themselves
    picked = [v for v, _ in counts.most_common() if v > 256][:5] + sorted(objs)[:5]

    def refs():  # a list of counts: a dict keyed by the ints would hold references itself
        return [sys.getrefcount(objs[v]) for v in picked]

    before = refs()
    for threads in (1, 2, 8):
        again = tok.encode_batch(texts, num_workers=threads)
        after = refs()
        assert [a - b for a, b in zip(after, before)] == [counts[v] for v in picked]
        assert all(v is objs[v] for ids in again for v in ids if v > 256)
        del again
        assert refs() == before


def test_encode_of_a_long_text_holds_exactly_one_reference_per_item(tok):
    # encode() of a text of 256 tokens or more counts its references per id and adds them in one
    # pass (as encode_batch does); a shorter one takes one per item as it goes. Both must leave
    # each cached int with exactly one reference per occurrence, and take them back when freed.
    import sys
    from collections import Counter

    long_text = "\n".join(corpus_texts()[:40])
    short_text = " hello world, hello world"
    for text in (long_text, short_text):
        first = tok.encode(text)
        counts = Counter(v for v in first if v > 256)
        assert (len(first) >= 256) == (text is long_text)
        objs = {v: v for v in counts}
        picked = [v for v, _ in counts.most_common(5)] + sorted(objs)[:5]

        def refs():
            return [sys.getrefcount(objs[v]) for v in picked]

        before = refs()
        again = tok.encode(text)
        assert again == first == cl100k_reference().encode_ordinary(text)
        assert [a - b for a, b in zip(refs(), before)] == [counts[v] for v in picked]
        assert all(v is objs[v] for v in again if v > 256)
        del again
        assert refs() == before


def test_encode_batch_lists_while_other_threads_collect_garbage(tok):
    # The cyclic GC runs in other Python threads while list shells are being filled: it must
    # never see one half built. A list of the result can then take part in a cycle and be
    # collected like any other.
    import gc
    import threading
    import weakref

    texts = corpus_texts()[:200]
    want = [tok.encode(t) for t in texts]
    stop = threading.Event()

    def churn():
        while not stop.is_set():
            junk = [[] for _ in range(200)]
            junk.append(junk)
            gc.collect(0)

    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(10):
            assert tok.encode_batch(texts, num_workers=3) == want
    finally:
        stop.set()
        for t in threads:
            t.join()

    class Holder:
        pass

    got = tok.encode_batch(texts[:3], num_workers=2)
    holder = Holder()
    got[0].append(got[0])  # a cycle through a result list
    got[0].append(holder)
    alive = weakref.ref(holder)
    del got, holder
    gc.collect()
    assert alive() is None
