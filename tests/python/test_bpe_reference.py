"""stoker's byte-level BPE gives exactly the reference libraries' ids: tiktoken for .tiktoken files,
`tokenizers` for tokenizer.json — on every sample document, the edge cases, a seeded random set,
and both settings of special-token handling. Decoding gives the text back."""

import json
import subprocess

import pytest

from bpe_cases import (EDGE_CASES, cl100k_as_tokenizer_json, cl100k_path, cl100k_reference,
                       corpus_texts, random_texts, stoker_encode_many, train_gpt2_style,
                       train_llama3_style)

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

FUZZ_CASES = 300


@pytest.fixture(scope="module")
def texts():
    return corpus_texts() + EDGE_CASES + random_texts(seed=10, count=FUZZ_CASES)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("bpe")
    (d / "gpt2").mkdir()
    gpt2 = train_gpt2_style(d / "gpt2" / "tokenizer.json")
    j = json.loads(gpt2.read_text(encoding="utf-8"))
    j["pre_tokenizer"]["add_prefix_space"] = True
    (d / "gpt2_prefix.json").write_text(json.dumps(j), encoding="utf-8")
    return {
        "gpt2": gpt2,
        "gpt2_prefix": d / "gpt2_prefix.json",
        "llama3": train_llama3_style(d / "llama3.json"),
        "cl100k_json": cl100k_as_tokenizer_json(d / "cl100k.json"),
    }


def hf_ids(path, texts, allow_special):
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = not allow_special
    return [e.ids for e in t.encode_batch(texts)]


def first_mismatch(texts, got, want):
    for text, g, w in zip(texts, got, want):
        if g != w:
            return f"text {text[:80]!r}: stoker {g[:40]} reference {w[:40]}"
    return None


def test_cl100k_matches_tiktoken_encode_ordinary(stoker_cli, texts):
    enc = cl100k_reference()
    want = enc.encode_ordinary_batch(texts)
    got = stoker_encode_many(stoker_cli, cl100k_path(), texts, "--pattern", "cl100k")
    assert first_mismatch(texts, got, want) is None


def test_cl100k_allow_special_matches_tiktoken(stoker_cli, texts):
    enc = cl100k_reference()
    want = [enc.encode(t, allowed_special="all") for t in texts]
    got = stoker_encode_many(
        stoker_cli, cl100k_path(), texts, "--pattern", "cl100k", "--allow-special"
    )
    assert first_mismatch(texts, got, want) is None
    assert any(100257 in ids for ids in got)  # the special token was really recognised


@pytest.mark.parametrize("pattern", ["r50k", "o200k_base"])
def test_other_named_patterns_match_tiktoken(stoker_cli, texts, pattern):
    """No r50k/o200k vocabulary ships offline: their patterns run over cl100k's ranks, in tiktoken
    as in stoker."""
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    pat = openai_public.r50k_pat_str if pattern == "r50k" else None
    if pat is None:
        import inspect
        src = inspect.getsource(openai_public.o200k_base)
        ns = {}
        exec(src[src.index("pat_str = "):src.index("return")].replace("    ", ""), ns)
        pat = ns["pat_str"]
    enc = tiktoken.Encoding("test", pat_str=pat, mergeable_ranks=load_tiktoken_bpe(
        str(cl100k_path())), special_tokens={"<|endoftext|>": 100257})
    got = stoker_encode_many(stoker_cli, cl100k_path(), texts, "--pattern", pattern,
                             "--special", "<|endoftext|>=100257")
    assert first_mismatch(texts, got, enc.encode_ordinary_batch(texts)) is None


def test_cl100k_as_regex_pattern_matches_named_pattern(stoker_cli, texts):
    enc = cl100k_reference()
    got = stoker_encode_many(stoker_cli, cl100k_path(), texts[:200], "--pattern", enc._pat_str,
                             "--special", "<|endoftext|>=100257")
    assert got == enc.encode_ordinary_batch(texts[:200])


@pytest.mark.parametrize("name", ["gpt2", "gpt2_prefix", "llama3", "cl100k_json"])
@pytest.mark.parametrize("allow_special", [False, True])
def test_tokenizer_json_matches_tokenizers(stoker_cli, trained, texts, name, allow_special):
    path = trained[name]
    flags = ["--allow-special"] if allow_special else []
    got = stoker_encode_many(stoker_cli, path, texts, *flags)
    assert first_mismatch(texts, got, hf_ids(path, texts, allow_special)) is None


def test_directory_holding_tokenizer_json(stoker_cli, trained):
    d = trained["gpt2"].parent
    got = stoker_encode_many(stoker_cli, d, ["Hello directory"])
    assert got == hf_ids(trained["gpt2"], ["Hello directory"], False)


def test_llama3_post_processor_can_be_ignored(stoker_cli, trained):
    path = trained["llama3"]
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = True
    text = "The GNU General Public License"
    want = t.encode(text, add_special_tokens=False).ids
    assert stoker_encode_many(stoker_cli, path, [text], "--no-post-processor") == [want]
    with_bos = stoker_encode_many(stoker_cli, path, [text])[0]
    assert with_bos == [t.token_to_id("<|begin_of_text|>")] + want


DIGIT_RUNS = [
    "1234", "12345", "123456789012", "x 12345 y", "v1.2345.67890", "0000000\n99999",
    "\uff11\uff12\uff13\uff14\uff15 full width", "\u0661\u0662\u0663\u0664\u0665 arabic-indic",
    "\u00b2\u00b3\u00b9\u00bc\u2160\u2161 other N",
]


def test_both_routes_give_the_same_ids(stoker_cli, trained, texts):
    """cl100k as the tiktoken file and as the tokenizer.json that transformers' TikTokenConverter
    makes of it: stoker on either route, tiktoken and tokenizers all give the same ids."""
    docs = texts + DIGIT_RUNS
    want = cl100k_reference().encode_ordinary_batch(docs)
    assert first_mismatch(docs, hf_ids(trained["cl100k_json"], docs, False), want) is None
    via_tiktoken = stoker_encode_many(stoker_cli, cl100k_path(), docs, "--pattern", "cl100k")
    via_json = stoker_encode_many(stoker_cli, trained["cl100k_json"], docs)
    assert first_mismatch(docs, via_tiktoken, want) is None
    assert first_mismatch(docs, via_json, want) is None


def test_both_routes_with_special_tokens_differ_only_in_the_special_ids(stoker_cli, trained,
                                                                       texts):
    """The converter numbers the special tokens after the ranks, as tokenizers numbers tokens it
    adds (<|endoftext|> 100256 ... <|endofprompt|> 100260), where tiktoken has 100257 ... 100276.
    With special tokens allowed each route gives its own reference's ids, and the two are the
    same once each special id is mapped by its text."""
    enc = cl100k_reference()
    hf = tokenizers.Tokenizer.from_file(str(trained["cl100k_json"]))
    to_tiktoken = {hf.token_to_id(name): i for name, i in enc._special_tokens.items()}
    assert sorted(to_tiktoken) == list(range(100256, 100261))
    docs = texts + DIGIT_RUNS
    via_tiktoken = stoker_encode_many(stoker_cli, cl100k_path(), docs, "--pattern", "cl100k",
                                      "--allow-special")
    via_json = stoker_encode_many(stoker_cli, trained["cl100k_json"], docs, "--allow-special")
    assert via_tiktoken == [enc.encode(t, allowed_special="all") for t in docs]
    assert via_json == hf_ids(trained["cl100k_json"], docs, True)
    assert [[to_tiktoken.get(i, i) for i in ids] for ids in via_json] == via_tiktoken
    assert any(100256 in ids for ids in via_json)


def test_tiktoken_pattern_written_into_a_tokenizer_json(stoker_cli, tmp_path):
    r"""tiktoken's own cl100k regex (possessive `\p{N}{1,3}+`) in a tokenizer.json: tokenizers'
    Oniguruma reads `X{n,m}+` as `(?:X{n,m})+` (Ruby syntax), so a run of 4+ digits is one
    pre-token there. stoker gives tokenizers' ids for the file; they differ from tiktoken's
    exactly on the documents with such runs."""
    import re

    path = cl100k_as_tokenizer_json(tmp_path / "possessive.json", cl100k_reference()._pat_str)
    docs = corpus_texts() + EDGE_CASES + DIGIT_RUNS
    got = stoker_encode_many(stoker_cli, path, docs)
    assert first_mismatch(docs, got, hf_ids(path, docs, False)) is None
    tiktoken_ids = cl100k_reference().encode_ordinary_batch(docs)
    differ = [d for d, x, y in zip(docs, got, tiktoken_ids) if x != y]
    long_digits = re.compile(r"\d{4}|[\u00b2\u00b3\u00b9\u00bc\u2160\u2161]{4}")
    assert differ and all(long_digits.search(d) for d in differ), differ[:3]
    assert "123456789012" in differ  # 123|456|789|012 in tiktoken


def test_long_documents_without_spaces(stoker_cli, trained):
    enc = cl100k_reference()
    word = "a" * 4000  # the reference merge is quadratic on one long piece; keep it small
    mixed = "".join(f"x{i}-Ab{i % 97}." for i in range(600_000))  # ~8 MB, no whitespace
    docs = [word, mixed]
    got = stoker_encode_many(stoker_cli, cl100k_path(), docs, "--pattern", "cl100k")
    assert got == enc.encode_ordinary_batch(docs)
    got = stoker_encode_many(stoker_cli, trained["gpt2"], [word, mixed[:1_000_000]])
    assert got == hf_ids(trained["gpt2"], [word, mixed[:1_000_000]], False)


def test_ten_megabyte_word_round_trips(stoker_cli, tmp_path):
    """10 MB of one letter is one pre-token: the heap merge keeps it near-linear."""
    text = "ab" * 5_000_000
    r = subprocess.run(
        [stoker_cli, "tokenize", "--tokenizer", cl100k_path(), "--pattern", "cl100k"],
        input=text.encode(), capture_output=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr.decode()
    ids = r.stdout.decode().split()
    assert 0 < len(ids) < len(text)
    back = subprocess.run(
        [stoker_cli, "tokenize", "--tokenizer", cl100k_path(), "--pattern", "cl100k", "--decode"],
        input=r.stdout, capture_output=True, timeout=120,
    )
    assert back.returncode == 0, back.stderr.decode()
    assert back.stdout.decode() == text


@pytest.mark.parametrize("which", ["tiktoken", "gpt2", "llama3"])
def test_decode_gives_the_text_back(stoker_cli, trained, which):
    docs = corpus_texts()[:20] + [t for t in EDGE_CASES if t]
    if which == "tiktoken":
        args = ["--tokenizer", str(cl100k_path()), "--pattern", "cl100k"]
    else:
        args = ["--tokenizer", str(trained[which]), "--no-post-processor"]
    for text in docs:
        if which == "llama3" and text != __import__("unicodedata").normalize("NFC", text):
            continue  # NFC changes the text; decode gives the normalized form
        enc = subprocess.run([stoker_cli, "tokenize", *args], input=text.encode(),
                             capture_output=True, timeout=60)
        assert enc.returncode == 0, enc.stderr.decode()
        dec = subprocess.run([stoker_cli, "tokenize", *args, "--decode"], input=enc.stdout,
                             capture_output=True, timeout=60)
        assert dec.returncode == 0, dec.stderr.decode()
        assert dec.stdout.decode() == text
