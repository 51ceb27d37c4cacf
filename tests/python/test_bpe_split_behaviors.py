"""tokenizers' `Split` pre-tokenizer with every behavior (Isolated, Removed, MergedWithPrevious,
MergedWithNext, Contiguous) and `invert`, as OLMo 2 (Removed + invert: tiktoken's "drop the text
between matches") and DeepSeek-V3 (three Isolated Splits, one of CJK ranges) write it: stoker's
ids equal tokenizers' on the sample corpus, the edge cases and seeded random text."""

import json

import pytest

from bpe_cases import (EDGE_CASES, LLAMA3_PATTERN, corpus_texts, random_texts, stoker_encode_many,
                       train_llama3_style)

tokenizers = pytest.importorskip("tokenizers")

BEHAVIORS = ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"]
# DeepSeek-V3's pre_tokenizer: digits, then CJK ranges, then its main pattern; ByteLevel last.
DEEPSEEK_SPLITS = [
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
    r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("split")
    return json.loads(train_llama3_style(d / "base.json").read_text(encoding="utf-8")), d


@pytest.fixture(scope="module")
def texts():
    cjk = ["東京は日本の首都です。ひらがなとカタカナ、漢字123", "中文分词测试：你好，世界！2024年"]
    return corpus_texts() + EDGE_CASES + cjk + random_texts(seed=29, count=150)


def with_splits(base, name, splits):
    j, d = base
    j = json.loads(json.dumps(j))
    j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": splits + [
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}
    path = d / f"{name}.json"
    path.write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    return path


def split(pattern, behavior, invert, kind="Regex"):
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


def check(stoker_cli, path, texts):
    t = tokenizers.Tokenizer.from_file(str(path))
    t.encode_special_tokens = True
    want = [e.ids for e in t.encode_batch(texts)]
    got = stoker_encode_many(stoker_cli, path, texts)
    for text, g, w in zip(texts, got, want):
        assert g == w, f"text {text[:60]!r}: stoker {g[:30]} tokenizers {w[:30]}"


@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("pattern", ["llama3", "punct", "space"])
def test_split_behavior_matches_tokenizers(stoker_cli, base, texts, behavior, invert, pattern):
    if pattern == "llama3":
        s = split(LLAMA3_PATTERN, behavior, invert)
    elif pattern == "punct":
        s = split(r"[.,!?;:]", behavior, invert)
    else:
        s = split(" ", behavior, invert, kind="String")
    check(stoker_cli, with_splits(base, f"{pattern}-{behavior}-{invert}", [s]), texts)


def test_olmo2_style_removed_inverted(stoker_cli, base, texts):
    """OLMo 2 keeps only the pattern's matches (Removed + invert), as tiktoken does."""
    check(stoker_cli, with_splits(base, "olmo2", [split(LLAMA3_PATTERN, "Removed", True)]), texts)


def test_deepseek_v3_three_splits(stoker_cli, base, texts):
    splits = [split(p, "Isolated", False) for p in DEEPSEEK_SPLITS]
    check(stoker_cli, with_splits(base, "deepseek", splits), texts)


def test_unknown_behavior_is_one_error_naming_the_field(stoker_cli, base):
    import subprocess

    path = with_splits(base, "bad", [split(" ", "Sideways", False, kind="String")])
    r = subprocess.run([stoker_cli, "tokenize", "--tokenizer", str(path)], input=b"x",
                       capture_output=True)
    assert r.returncode == 2
    assert "pre_tokenizer.pretokenizers[0].behavior: 'Sideways' is not supported" in \
        r.stderr.decode()
