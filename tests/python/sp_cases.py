"""SentencePiece-family tokenizers for the tests, with no download: the real Mistral 7B
SentencePiece BPE models that the PyPI package mistral-common ships (v1 = Mistral 7B v0.1, the
Llama 2 layout: 32000 pieces, byte fallback; v3 adds control and user-defined pieces), and the
tokenizer.json that transformers' LlamaConverter makes of them (its generate_merges, and the
normalizer / pre_tokenizer / decoder it writes), in the variants models publish."""

import json
from pathlib import Path

import pytest

META = "\u2581"


def mistral_model(version: str) -> Path:
    """tokenizer.model.v1 or mistral_instruct_tokenizer_240323.model.v3 inside mistral-common."""
    mc = pytest.importorskip("mistral_common")
    data = Path(mc.__file__).parent / "data"
    name = {"v1": "tokenizer.model.v1", "v3": "mistral_instruct_tokenizer_240323.model.v3"}[version]
    return data / name


def sp_tokenizer_json(model: Path, out: Path, variant: str) -> Path:
    """A tokenizer.json of the SentencePiece BPE `model`, as transformers converts one:
    - "legacy": Llama 2 / Mistral 7B as published: Sequence[Prepend("▁"), Replace(" ", "▁")], no
      pre_tokenizer, decoder Replace + ByteFallback + Fuse + Strip(" ", 1, 0);
    - "first": transformers' non-legacy Llama: Metaspace(prepend_scheme="first", split=False);
    - "always_split": Metaspace(always, split=True) with a Metaspace decoder;
    - "old_metaspace": the pre-0.19 form {"add_prefix_space": true} (always, split);
    - "never": Gemma's layout: Replace(" ", "▁") only, Metaspace(never, split=False) decoder;
    - "gemma5": Gemma's layout as transformers 5's GemmaTokenizer writes it: "never" with a
      Split(" ", MergedWithPrevious) pre_tokenizer (a no-op after the Replace);
    - "strip": "legacy" behind tokenizers' Strip normalizer (both ends);
    - "strip_nfc": Sequence[Strip(right only), NFC, Replace(" ", "▁")] ("never"'s decoder);
    - "replace_strip": Sequence[Replace(" ", "▁"), Strip(left only)]: strips what is left of the
      whitespace (tabs, newlines, U+3000), not the "▁" that spaces became."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers.tokenization_utils_base import generate_merges

    proto = pb.ModelProto()
    proto.ParseFromString(model.read_bytes())
    vocab = {p.piece: i for i, p in enumerate(proto.pieces)}
    scores = {p.piece: p.score for p in proto.pieces}
    merges = generate_merges(vocab, scores)  # what LlamaConverter passes (vocab_scores)
    t = Tokenizer(models.BPE(vocab, merges, unk_token=proto.trainer_spec.unk_piece, fuse_unk=True,
                             byte_fallback=True, dropout=None))
    t.add_tokens([AddedToken(p.piece, normalized=False, special=p.type == 3)
                  for p in proto.pieces if p.type in (3, 4)])
    llama_decoder = decoders.Sequence([decoders.Replace(META, " "), decoders.ByteFallback(),
                                       decoders.Fuse(), decoders.Strip(content=" ", left=1)])
    if variant == "legacy":
        t.normalizer = normalizers.Sequence([normalizers.Prepend(prepend=META),
                                             normalizers.Replace(pattern=" ", content=META)])
        t.decoder = llama_decoder
    elif variant == "first":
        t.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="first",
                                                   split=False)
        t.decoder = llama_decoder
    elif variant in ("always_split", "old_metaspace"):
        t.pre_tokenizer = pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always",
                                                   split=True)
        t.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Metaspace(
            replacement=META, prepend_scheme="always", split=True), decoders.Fuse()])
    elif variant in ("never", "gemma5", "strip_nfc", "replace_strip"):
        if variant == "gemma5":
            t.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
        replace = normalizers.Replace(pattern=" ", content=META)
        t.normalizer = {
            "never": replace,
            "gemma5": replace,
            "strip_nfc": normalizers.Sequence([normalizers.Strip(left=False, right=True),
                                               normalizers.NFC(), replace]),
            "replace_strip": normalizers.Sequence([replace,
                                                   normalizers.Strip(left=True, right=False)]),
        }[variant]
        t.decoder = decoders.Sequence([decoders.Replace(META, " "), decoders.ByteFallback(),
                                       decoders.Fuse()])
    elif variant == "strip":
        t.normalizer = normalizers.Sequence([normalizers.Strip(left=True, right=True),
                                             normalizers.Prepend(prepend=META),
                                             normalizers.Replace(pattern=" ", content=META)])
        t.decoder = llama_decoder
    else:
        raise ValueError(variant)
    t.save(str(out))
    if variant == "old_metaspace":
        j = json.loads(out.read_text(encoding="utf-8"))
        j["pre_tokenizer"] = {"type": "Metaspace", "replacement": META, "add_prefix_space": True}
        out.write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    return out


# Texts that reach the corners of SentencePiece-style BPE.
SP_EDGE_CASES = [
    "\u2581",  # the meta symbol itself
    "\u2581\u2581 a\u2581b \u2581",
    "    four spaces then a word",
    "a" + " " * 40 + "b" + " " * 3,
    " leading and trailing ",
    "<0x41> <unk> <s></s> [INST] hi [/INST] [REFERENCE_DOC_1] x[REFERENCE_DOC_12]y",
    "\U00020000\U0002A6D6 \U0001FAE8 \U00011700\U00011701 \u0F00\u16A0\u2C00",  # outside the vocab
    "\U0001F9D1\u200D\U0001F9AF\u200D\u27A1\uFE0F",
    "tab\tnewline\nreturn\rnull\x00bell\x07",
    "x" * 3000,
    "ab" * 2000 + " " + "\u00e9" * 500,
    # Whitespace at the ends of a text and of the runs between control tokens (Strip)
    "\u3000\t full-width and em spaces\u2003\u2000 \n",
    "   ",
    "\n\t\u00a0",
    " <s> between </s> \t[INST]  x  [/INST]\n",
    "\u0301 e\u0301 \u1680",
]
