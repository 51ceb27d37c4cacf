#!/usr/bin/env python3
"""Single-thread encode speed of stoker's Unigram encoder (issue 48) against PyPI sentencepiece
and tokenizers, CPU time, on the same texts as bench/tokenizer_vs_peers.py (the sample corpus,
prose from /usr/share/doc, Python's standard library as code; nothing downloaded).

Files: the project's sample model (data/sample/sample.model, nmt_nfkc, byte fallback), Google's
sentencepiece test models in tests/data/tokenizers/sentencepiece-test/ (nfkc; 1,000 and 8,000
pieces), each as a `.model` (against sentencepiece) and as the T5-layout tokenizer.json built from
it (tests/python/unigram_cases.py; against tokenizers). Every row's ids are checked against its
reference first. Prints a Markdown table: MB/s of UTF-8 in and tokens/s per CPU second, and the
ratio to the reference. Not a test: no assertion on times.

  .venv/bin/python bench/unigram_vs_peers.py [--prose-mb 2] [--code-mb 2] [--repeat 3]
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tokenizer_vs_peers import bench_texts, timed  # noqa: E402
from unigram_cases import unigram_tokenizer_json  # noqa: E402

MODELS = {
    "sample.model": REPO / "data/sample/sample.model",
    "sentencepiece test_model": REPO / "tests/data/tokenizers/sentencepiece-test/test_model.model",
    "sentencepiece test_ja_model":
        REPO / "tests/data/tokenizers/sentencepiece-test/test_ja_model.model",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--prose-mb", type=int, default=2)
    ap.add_argument("--code-mb", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import sentencepiece as spm
    import stoker
    import tokenizers

    texts = bench_texts(args.prose_mb, args.code_mb)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"{len(texts)} texts, {mb:.1f} MB; one thread, CPU time (best of {args.repeat})\n")
    print("| file | encoder | MB/s | M tokens/s | vs reference |")
    print("|---|---|---|---|---|")
    tmp = Path(tempfile.mkdtemp())
    for name, path in MODELS.items():
        sp = spm.SentencePieceProcessor(model_file=str(path))
        ours = stoker.Tokenizer(path)
        want = [sp.encode(t) for t in texts]
        differ = sum(a != b for a, b in zip((ours.encode(t) for t in texts), want))
        if differ:  # known: a few texts of 200k+ characters (docs/tokenizers.md)
            print(f"({name}: {differ} of {len(texts)} texts differ from sentencepiece)")
        tj = unigram_tokenizer_json(path, tmp / (path.stem + ".json"), eos=sp.id_to_piece(sp.eos_id()))
        hf = tokenizers.Tokenizer.from_file(str(tj))
        hf.encode_special_tokens = True
        hf.no_truncation()
        ours_json = stoker.Tokenizer(tj)
        want_json = [e.ids for e in hf.encode_batch(texts)]
        assert [ours_json.encode(t) for t in texts] == want_json, name + " tokenizer.json"
        n_tokens = sum(len(ids) for ids in want)
        rows = [
            (".model", "sentencepiece", lambda: [sp.encode(t) for t in texts]),
            (".model", "stoker", lambda: [ours.encode(t) for t in texts]),
            ("tokenizer.json", "tokenizers", lambda: [hf.encode(t).ids for t in texts]),
            ("tokenizer.json", "stoker", lambda: [ours_json.encode(t) for t in texts]),
        ]
        ref = {}
        for kind, who, fn in rows:
            cpu, _ = timed(fn, args.repeat, time.process_time)
            if who != "stoker":
                ref[kind] = cpu
            ratio = f"{ref[kind] / cpu:.2f}x" if who == "stoker" else "1.00x"
            print(f"| {name} ({kind}) | {who} | {mb / cpu:.2f} | {n_tokens / cpu / 1e6:.2f} | "
                  f"{ratio} |")


if __name__ == "__main__":
    main()
