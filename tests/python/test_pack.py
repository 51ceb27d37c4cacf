"""`stoker pack` and `stoker merge` at the command line: round trips, determinism, bounded open
files, every bad input, task split + merge. The CLI is $STOKER_CLI (default build/stoker)."""
import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
STOKER = os.environ.get("STOKER_CLI", str(REPO / "build" / "stoker"))
SAMPLE = REPO / "data" / "sample"
BYTES_EOS = 256


def run(*args, env=None, prefix=()):
    """Runs the CLI; returns the CompletedProcess (never raises on a non-zero exit)."""
    full_env = dict(os.environ)
    for k in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "RANK",
              "WORLD_SIZE"):
        full_env.pop(k, None)
    full_env.update(env or {})
    return subprocess.run([*prefix, STOKER, *map(str, args)], capture_output=True, text=True,
                          env=full_env, timeout=300)


def pack(*args, **kw):
    p = run("pack", "--progress", "off", *args, **kw)
    assert p.returncode == 0, p.stderr
    return p


def read_idx(path):
    """Parses a Megatron .idx (docs/formats-reference.md §1.2): returns (dtype, lengths, pointers, doc_idx)."""
    raw = Path(path).read_bytes()
    assert raw[:9] == b"MMIDIDX\x00\x00"
    dtype = {8: np.uint16, 4: np.int32}[raw[17]]
    n = int.from_bytes(raw[18:26], "little")
    d = int.from_bytes(raw[26:34], "little")
    lengths = np.frombuffer(raw, np.int32, n, 34)
    pointers = np.frombuffer(raw, np.int64, n, 34 + 4 * n)
    doc_idx = np.frombuffer(raw, np.int64, d, 34 + 12 * n)
    assert len(raw) == 34 + 12 * n + 8 * d
    return dtype, lengths, pointers, doc_idx


def read_dataset(directory):
    """Every document of a stoker dataset as a list of token lists, read from our shards directly."""
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    docs = []
    for shard in manifest["shards"]:
        prefix = directory / shard["prefix"]
        dtype, lengths, pointers, _ = read_idx(f"{prefix}.idx")
        data = np.fromfile(f"{prefix}.bin", dtype)
        item = np.dtype(dtype).itemsize
        for length, pointer in zip(lengths, pointers):
            start = pointer // item
            docs.append(data[start:start + length].astype(np.int64).tolist())
    return manifest, docs


def bytes_doc(text):
    return list(text.encode("utf-8")) + [BYTES_EOS]


def write_jsonl(path, texts, field="text"):
    Path(path).write_text("".join(json.dumps({field: t, "n": i}) + "\n" for i, t in enumerate(texts)),
                          encoding="utf-8")


def tree_bytes(directory):
    return {p.name: p.read_bytes() for p in sorted(Path(directory).iterdir())}


TEXTS = ["short", "月落乌啼霜满天", "Вол без рога не е човек.", "x" * 5000, "tab\tand\nnewline"]


def test_bytes_round_trip_with_gz_zst_text_and_directory_inputs(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", TEXTS[:2])
    with gzip.open(tmp_path / "b.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(json.dumps({"text": TEXTS[2]}) + "\n")
    write_jsonl(tmp_path / "c.jsonl", TEXTS[3:])
    subprocess.run(["zstd", "-q", "--rm", str(tmp_path / "c.jsonl")], check=True)
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "sub" / "one.txt").write_text("file one")
    (tmp_path / "docs" / "two.txt").write_text("file two")
    (tmp_path / "docs" / ".hidden").write_text("never packed")
    out = tmp_path / "out"
    p = pack(tmp_path / "a.jsonl", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl.zst",
             tmp_path / "docs", "-o", out)
    assert "5 input file(s)" in p.stdout
    manifest, docs = read_dataset(out)
    assert manifest["dtype"] == "uint16"
    assert manifest["tokenizer"]["kind"] == "bytes"
    assert docs == [bytes_doc(t) for t in TEXTS + ["file one", "file two"]]


def test_sentencepiece_round_trip_matches_the_python_library(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    sp = spm.SentencePieceProcessor(model_file=str(SAMPLE / "sample.model"))
    pack(SAMPLE / "corpus.jsonl", "-o", tmp_path / "sp", "--tokenizer", SAMPLE / "sample.model")
    manifest, docs = read_dataset(tmp_path / "sp")
    texts = [json.loads(line)["text"] for line in open(SAMPLE / "corpus.jsonl", encoding="utf-8")]
    assert manifest["tokenizer"]["vocab_size"] == sp.vocab_size()
    assert manifest["tokenizer"]["eos_id"] == sp.eos_id()
    assert docs == [ids + [sp.eos_id()] for ids in sp.encode(texts)]


def test_int32_round_trip(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", TEXTS)
    pack(tmp_path / "a.jsonl", "-o", tmp_path / "out", "--dtype", "int32")
    manifest, docs = read_dataset(tmp_path / "out")
    assert manifest["dtype"] == "int32"
    assert read_idx(tmp_path / "out" / "part-00000-00000.idx")[0] == np.int32
    assert docs == [bytes_doc(t) for t in TEXTS]


def test_output_is_identical_for_1_2_and_8_threads(tmp_path):
    (tmp_path / "in").mkdir()
    write_jsonl(tmp_path / "in" / "a.jsonl",
                [f"document {i} " + "y" * (i % 300) for i in range(20000)])
    outputs = []
    for threads in (1, 2, 8):
        out = tmp_path / f"out{threads}"
        pack(tmp_path / "in", "-o", out, "--num-workers", threads, "--shard-size", "256KiB",
             "--tokenizer", SAMPLE / "sample.model")
        outputs.append(tree_bytes(out))
    assert len(outputs[0]) > 4  # several shards
    assert outputs[0] == outputs[1] == outputs[2]


def test_100k_files_pack_with_64_open_files(tmp_path):
    src = tmp_path / "many"
    src.mkdir()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    for d in range(100):
        sub = src / f"{d:03d}"
        sub.mkdir()
        for i in range(1000):  # raw os calls: about twice as fast as pathlib for 100k files
            fd = os.open(sub / f"{i:04d}.txt", flags, 0o644)
            os.write(fd, b"doc %d/%d " % (d, i) + b"z" * (i % 50))
            os.close(fd)
    # A hard limit of 64 descriptors: opening the files all at once would fail with EMFILE.
    p = run("pack", "--progress", "off", src, "-o", tmp_path / "out", "--num-workers", "2",
            prefix=("prlimit", "--nofile=64:64"))
    assert p.returncode == 0, p.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["documents"] == 100_000
    _, docs = read_dataset(tmp_path / "out")
    assert docs[0] == bytes_doc("doc 0/0 ")
    assert docs[-1] == bytes_doc("doc 99/999 " + "z" * 49)


def test_task_split_from_slurm_environment_then_merge_equals_single_pack(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    for f in range(6):
        write_jsonl(inputs / f"{f}.jsonl", [f"file {f} doc {i}" for i in range(10 * (f + 1))])
    pack(inputs, "-o", tmp_path / "single", "--shard-size", "1KiB")
    job = tmp_path / "job"
    for task in range(1, 5):  # a Slurm array numbered 1..4, every task into the same output
        pack(inputs, "-o", job, "--shard-size", "1KiB",
             env={"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": "1",
                  "SLURM_ARRAY_TASK_COUNT": "4"})
        if task == 2:  # merging with a task missing is refused
            p = run("merge", job)
            assert p.returncode == 2 and "tasks 2, 3 of 4 have no receipt" in p.stderr, p.stderr
    p = run("merge", job)
    assert p.returncode == 0, p.stderr
    _, single = read_dataset(tmp_path / "single")
    merged_manifest, merged = read_dataset(job)
    assert merged == single
    assert merged_manifest["shards"][0]["prefix"] == "part-00000-00000"
    single_counters = json.loads((tmp_path / "single" / "manifest.json").read_text())["counters"]
    del single_counters["task_index"], single_counters["task_count"]
    assert merged_manifest["counters"] == {**single_counters, "merged_parts": 4}


def test_rank_world_size_and_explicit_flags_agree(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", ["a"])
    write_jsonl(tmp_path / "b.jsonl", ["b"])
    for task in (1, 0):
        pack(tmp_path / "a.jsonl", tmp_path / "b.jsonl", "-o", tmp_path / "r",
             env={"RANK": str(task), "WORLD_SIZE": "2"})
        pack(tmp_path / "a.jsonl", tmp_path / "b.jsonl", "-o", tmp_path / "f", "--task-index",
             str(task), "--task-count", "2")
    for job in ("r", "f"):
        p = run("merge", tmp_path / job)
        assert p.returncode == 0, p.stderr
    files = lambda d: {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*"))
                       if p.is_file()}
    assert files(tmp_path / "r") == files(tmp_path / "f")
    assert read_dataset(tmp_path / "r")[1] == [bytes_doc("a"), bytes_doc("b")]


# --- bad input: exit code 2 and one line on stderr naming the file -------------------------------

def expect_error(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, p.stderr
    for needle in needles:
        assert str(needle) in lines[0], lines[0]


@pytest.mark.parametrize("policy", ["replace", "skip", "fail"])
def test_invalid_utf8_under_each_policy(tmp_path, policy):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9 au lait"}\n')
    out = tmp_path / "out"
    p = run("pack", "--progress", "off", bad, "-o", out, "--utf8", policy)
    if policy == "fail":
        expect_error(p, bad, ":2", "invalid UTF-8 at byte offset 28")
        assert not (out / "manifest.json").exists()
        return
    assert p.returncode == 0, p.stderr
    manifest, docs = read_dataset(out)
    if policy == "replace":
        assert manifest["counters"]["invalid_utf8_replaced_documents"] == 1
        assert docs[1] == bytes_doc("caf\ufffd au lait")
        assert "1 document(s) repaired" in p.stdout
    else:
        assert manifest["counters"]["invalid_utf8_skipped_documents"] == 1
        assert docs == [bytes_doc("ok")]


def test_bad_json_line_and_missing_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": oops}\n')
    expect_error(run("pack", bad, "-o", tmp_path / "o1"), bad, ":2", "invalid JSON")
    missing = tmp_path / "missing.jsonl"
    missing.write_text('{"body": "x"}\n')
    expect_error(run("pack", missing, "-o", tmp_path / "o2"), missing, ":1",
                 "missing text field 'text'")
    p = run("pack", "--progress", "off", missing, "-o", tmp_path / "o3", "--text-field", "body")
    assert p.returncode == 0, p.stderr
    p = run("pack", "--progress", "off", bad, missing, "-o", tmp_path / "o4", "--on-error", "skip")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "o4" / "manifest.json").read_text())["counters"]["bad_lines_skipped"] == 2


def test_unreadable_missing_and_corrupt_inputs(tmp_path):
    expect_error(run("pack", tmp_path / "nope.jsonl", "-o", tmp_path / "o"), tmp_path / "nope.jsonl",
                 "no such file")
    if os.geteuid() == 0:
        unreadable = "/proc/self/mem"  # root reads any file; this one fails with EIO
    else:
        unreadable = tmp_path / "secret.txt"
        unreadable.write_text("x")
        unreadable.chmod(0)
    expect_error(run("pack", unreadable, "-o", tmp_path / "o"), unreadable)
    corrupt = tmp_path / "c.jsonl.gz"
    corrupt.write_bytes(gzip.compress(b'{"text": "abc"}\n' * 1000)[:-40])
    expect_error(run("pack", corrupt, "-o", tmp_path / "o"), corrupt, "truncated gzip")


def test_empty_input(tmp_path):
    (tmp_path / "empty").mkdir()
    expect_error(run("pack", tmp_path / "empty", "-o", tmp_path / "o"), "no input files")
    (tmp_path / "blank.jsonl").write_text("\n")
    expect_error(run("pack", tmp_path / "blank.jsonl", "-o", tmp_path / "o"), "no documents")


def test_existing_dataset_needs_overwrite(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", ["first"])
    pack(tmp_path / "a.jsonl", "-o", tmp_path / "out")
    expect_error(run("pack", tmp_path / "a.jsonl", "-o", tmp_path / "out"), tmp_path / "out",
                 "--overwrite")
    write_jsonl(tmp_path / "a.jsonl", ["second"])
    pack(tmp_path / "a.jsonl", "-o", tmp_path / "out", "--overwrite")
    assert read_dataset(tmp_path / "out")[1] == [bytes_doc("second")]


def test_tokenizer_errors(tmp_path):
    expect_error(run("pack", SAMPLE / "corpus.jsonl", "-o", tmp_path / "o", "--tokenizer",
                     tmp_path / "tok" / "tokenizer.json"), tmp_path / "tok" / "tokenizer.json")
    expect_error(run("pack", SAMPLE / "corpus.jsonl", "-o", tmp_path / "o", "--tokenizer",
                     tmp_path / "none.model"), tmp_path / "none.model")


def test_help_lists_the_options():
    p = run("pack", "--help")
    assert p.returncode == 0
    for option in ("--tokenizer", "--text-field", "--shard-size", "--num-workers", "--task-index",
                   "--task-count", "--utf8", "--overwrite", "SLURM_ARRAY_TASK_ID"):
        assert option in p.stdout, option
