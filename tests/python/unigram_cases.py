"""SentencePiece Unigram models for the tests, trained here with PyPI `sentencepiece` (no
download), in each normalization and whitespace variant, and the texts that tell encoders apart:
ties in the best segmentation (runs of "<", "-", "="), punctuation runs, CJK, combining marks,
ligatures, emoji, long words."""

import io
from pathlib import Path

from bpe_cases import EDGE_CASES, corpus_texts, random_texts
from sp_cases import SP_EDGE_CASES

# Extra training lines so that "<", "<<", "-", "--", ... are all pieces and ties arise.
TIE_LINES = [
    "x << y <<< z <<<< w <= v <<= u << << <<<<<<",
    "--- ---- ----- -- - ------ ========= == === = ==== -> --> <-- <!-- -->",
    "... .... .. !!! ?? ?!? ;;; ::: ### ## # *** ** * ___ __ _",
    "fi ffi ffl ﬁ ﬂ ﬃ café cafe\u0301 naïve nai\u0308ve Å Å",
]

TIE_TEXTS = [
    "<<<", "<<<<", "<<<<<", "a<<<b", "!!!", "x!!!", "a!!!!!b !!! !!!!", "x--- y---- ...!!!", " <<< ", "-", "--", "---", "----", "-----", "-" * 31,
    "=" * 17, "<!--- x --->", "-->>", "<<--==>>", "....!!!!????", "###***___",
    "\ufb01\ufb02\ufb03 \ufb00 \u2126 \u00bd \u2460 \uff21\uff22 \u3000x\u3000",
    "e\u0301\u0301 \u1e9b\u0323 \u0958 \uac00\u11a8",
    "\U0001F468\u200D\U0001F469\u200D\U0001F467 \U0001F44D\U0001F3FD \U0001F1EF\U0001F1F5",
    "supercalifragilisticexpialidocious " * 3 + "Donaudampfschifffahrtsgesellschaftskapitän",
    "pneumonoultramicroscopicsilicovolcanoconiosis" * 20,
]

# name -> extra spm_train options (beyond the common ones in train_unigram).
VARIANTS = {
    "nmt_nfkc_bytes": dict(normalization_rule_name="nmt_nfkc", byte_fallback=True),
    "nmt_nfkc_unk": dict(normalization_rule_name="nmt_nfkc"),
    "nfkc": dict(normalization_rule_name="nfkc", byte_fallback=True),
    "nmt_nfkc_cf": dict(normalization_rule_name="nmt_nfkc_cf"),
    "identity": dict(normalization_rule_name="identity", byte_fallback=True),
    "keep_spaces": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                        add_dummy_prefix=False),
    "suffix": dict(treat_whitespace_as_suffix=True, byte_fallback=True),
    "no_split": dict(split_by_whitespace=False, split_by_unicode_script=False),
    "user_defined": dict(user_defined_symbols=["[X]", "<<", "foo bar", "\u2581ab"],
                         control_symbols=["<ctl>"], byte_fallback=True),
}


def train_unigram(out_dir: Path, name: str, vocab_size=3000) -> Path:
    """`name`.model in out_dir: a Unigram model of the sample corpus and TIE_LINES."""
    import sentencepiece as spm

    path = out_dir / f"{name}.model"
    if path.exists():
        return path
    model = io.BytesIO()
    lines = corpus_texts() + TIE_LINES * 30
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([t.replace("\n", " ") for t in lines if t.strip()]),
        model_writer=model, model_type="unigram", vocab_size=vocab_size,
        character_coverage=0.995, max_sentence_length=100000, minloglevel=2,
        num_threads=1, **VARIANTS[name])
    path.write_bytes(model.getvalue())
    return path


def unigram_texts():
    return corpus_texts() + EDGE_CASES + SP_EDGE_CASES + TIE_TEXTS + random_texts(4848, 300)


def unigram_tokenizer_json(model: Path, out: Path, eos="</s>") -> Path:
    """The tokenizer.json of a Unigram `.model` in the layout T5's published file has: the model's
    [piece, score] vocabulary, unk_id, byte_fallback; its charsmap as a Precompiled normalizer;
    WhitespaceSplit + Metaspace; a Metaspace decoder (with ByteFallback before it when the model
    falls back to bytes); control pieces as special added tokens, `eos` appended after each text."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import (AddedToken, Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors)

    proto = pb.ModelProto()
    proto.ParseFromString(model.read_bytes())
    vocab = [(p.piece, p.score) for p in proto.pieces]
    unk = next(i for i, p in enumerate(proto.pieces) if p.type == 2)
    t = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=proto.trainer_spec.byte_fallback))
    t.normalizer = normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap)
    t.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")])
    meta = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    t.decoder = (decoders.Sequence([decoders.ByteFallback(), decoders.Fuse(), meta])
                 if proto.trainer_spec.byte_fallback else meta)
    t.add_special_tokens([AddedToken(p.piece, special=True, normalized=False)
                          for p in proto.pieces if p.type in (2, 3)])
    eos_id = next(i for i, p in enumerate(proto.pieces) if p.piece == eos)
    t.post_processor = processors.TemplateProcessing(single=f"$A {eos}", pair=f"$A {eos} $B {eos}",
                                                     special_tokens=[(eos, eos_id)])
    t.save(str(out))
    return out
