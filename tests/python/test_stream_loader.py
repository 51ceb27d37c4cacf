"""stoker.Stream through stoker.Loader: same batches for any num_workers, exact resume through
state_dict, the ids of `stoker pack`, bad input, and a torchrun (gloo) run that all-reduces every
step so that unequal step counts would hang (bounded by a timeout)."""

import collections
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import stoker
from test_py_data import torchrun_env_and_port


def write_corpus(d: Path, counts):
    paths = []
    for f, n in enumerate(counts):
        p = d / f"part-{f}.jsonl"
        with open(p, "w") as out:
            for i in range(n):
                text = " ".join([f"doc {f}-{i}"] * (1 + (7 * i + 3 * f) % 9))
                out.write(json.dumps({"text": text}) + "\n")
        paths.append(p)
    return paths


def batches(loader, n):
    out = []
    while len(out) < n:
        for b in loader:
            out.append({k: v.copy() for k, v in b.items()})
            if len(out) == n:
                break
    return out


def same(a, b):
    return all(a[k].tobytes() == b[k].tobytes() for k in a) and a.keys() == b.keys()


def open_loader(paths, **kw):
    stream = stoker.Stream([str(p) for p in paths], tokenizer="bytes", shuffle_buffer=64)
    opts = dict(seq_len=64, batch_size=4, num_workers=1, pack="bestfit", seed=3, output="numpy",
                rank=0, world_size=1, pin_memory=False)
    opts.update(kw)
    return stoker.Loader(stream, **opts)


def test_same_batches_for_any_num_workers(tmp_path):
    paths = write_corpus(tmp_path, [300, 40, 200])
    ref = batches(open_loader(paths, num_workers=1), 40)
    for w in (2, 8):
        got = batches(open_loader(paths, num_workers=w), 40)
        assert all(same(a, b) for a, b in zip(ref, got)), f"num_workers={w}"


def test_glob_and_len(tmp_path):
    write_corpus(tmp_path, [100, 100])
    loader = stoker.Loader(stoker.Stream(str(tmp_path / "part-*.jsonl"), shuffle_buffer=16),
                           seq_len=64, batch_size=2, output="numpy", rank=0, world_size=1)
    n = len(loader)
    assert n > 0 and sum(1 for _ in loader) == n
    with pytest.raises(FileNotFoundError):
        stoker.Stream(str(tmp_path / "nothing-*.jsonl"))


@pytest.mark.parametrize("pack", ["concat", "bestfit", "pad"])
def test_resume_from_state_dict_equals_the_uninterrupted_stream(tmp_path, pack):
    paths = write_corpus(tmp_path, [300, 40, 200])
    full = batches(open_loader(paths, pack=pack, num_workers=2), 50)
    rng = np.random.default_rng(0)
    for k in sorted(rng.choice(45, size=3, replace=False)):
        loader = open_loader(paths, pack=pack, num_workers=2)
        it = iter(loader)
        for _ in range(k):
            next(it)
        state = json.loads(json.dumps(loader.state_dict()))
        assert state["plan_state"]["stream"], "the state carries the stream's references"
        resumed = open_loader(paths, pack=pack, num_workers=3)
        resumed.load_state_dict(state)
        got = batches(resumed, 5)
        assert all(same(a, b) for a, b in zip(full[k:k + 5], got)), f"resumed after {k}"


def test_ids_equal_stoker_pack_as_a_multiset_of_documents(tmp_path, run_stoker):
    src = tmp_path / "src"
    src.mkdir()
    paths = write_corpus(src, [40, 24])  # 64 documents: 16 full batches of 4
    p = run_stoker("pack", "--progress", "off", src, "-o", tmp_path / "packed",
                   "--tokenizer", "bytes")
    assert p.returncode == 0, p.stderr
    packed = stoker.Loader(str(tmp_path / "packed"), seq_len=1024, batch_size=4, pack="pad",
                           shuffle="none", output="numpy", rank=0, world_size=1,
                           segment_ids=True)
    streamed = open_loader(paths, pack="pad", seq_len=1024)

    def docs(loader):
        out = collections.Counter()
        for b in loader:
            for row, seg in zip(b["input_ids"], b["segment_ids"]):
                out[tuple(row[seg > 0].tolist())] += 1
        return out

    a, b = docs(packed), docs(streamed)
    assert sum(a.values()) == 64
    assert a == b


def test_missing_text_field_names_file_and_offset_or_is_skipped(tmp_path):
    paths = write_corpus(tmp_path, [80])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"body": "no text"}\n')
    with pytest.raises(ValueError,
                       match=r'bad\.jsonl.*byte offset 17.*missing text field.*on_error="skip"'):
        batches(open_loader(paths + [bad]), 10)
    assert len(batches(open_loader(paths + [bad], on_error="skip"), 10)) == 10


TORCHRUN_SCRIPT = textwrap.dedent("""
    import datetime, sys, json
    import torch, torch.distributed as dist
    import stoker
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank, world = dist.get_rank(), dist.get_world_size()
    paths = sys.argv[1:]
    loader = stoker.Loader(stoker.Stream(paths, shuffle_buffer=32), seq_len=32, batch_size=2,
                           pack="pad", num_workers=2, output="torch", pin_memory=False)
    steps = 0
    seen = []
    for b in loader:
        t = torch.ones(1)
        dist.all_reduce(t)  # a rank with fewer steps would leave the others waiting here
        assert int(t.item()) == world
        steps += 1
        for row, seg in zip(b["input_ids"], b["segment_ids"]):
            seen.append(bytes(row[seg > 0][:-1].to(torch.uint8).tolist()).decode())
    counts = [None] * world
    dist.all_gather_object(counts, (steps, seen))
    if rank == 0:
        all_seen = [d for _, s in counts for d in s]
        print("steps", [c[0] for c in counts], "unique", len(set(all_seen)) == len(all_seen))
    dist.destroy_process_group()
""")


@pytest.mark.parametrize("nproc", [3])
def test_torchrun_gloo_all_reduce_every_step(tmp_path, nproc):
    pytest.importorskip("torch")
    paths = write_corpus(tmp_path, [120, 7, 0, 60, 33])
    script = tmp_path / "run.py"
    script.write_text(TORCHRUN_SCRIPT)
    env, port = torchrun_env_and_port()
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node",
                          str(nproc), "--master_addr",
                          "127.0.0.1", "--master_port", str(port), str(script),
                          *map(str, paths)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    line = [l for l in out.stdout.splitlines() if l.startswith("steps")][0]
    steps = json.loads(line.split("unique")[0].split("steps", 1)[1].strip())
    assert len(set(steps)) == 1 and steps[0] > 0
    assert line.endswith("unique True")


def test_bench_stream_cli(tmp_path, run_stoker):
    paths = write_corpus(tmp_path, [200, 50])
    p = run_stoker("bench", "--stream", *paths, "--tokenizer", "bytes", "--shuffle-buffer", "100",
                   "--seq-len", "64", "--batch-size", "2", "--pack", "bestfit", "--num-workers", "2",
                   "--batches", "20", "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["batches"] == 20 and r["tokens_per_s"] > 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"body": "no text"}\n' * 50)
    p = run_stoker("bench", "--stream", bad, "--seq-len", "8", "--batch-size", "1",
                   "--batches", "5")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "bad.jsonl" in p.stderr and "missing text field" in p.stderr
    assert "--on-error skip" in p.stderr  # the stream's own flag, not pack's --bad-lines


@pytest.mark.parametrize("option, message", [
    (dict(shuffle="none"), "shuffle='none'"), (dict(shuffle=False), "shuffle='none'"),
    (dict(shuffle="block"), "shuffle='block'"), (dict(block_shards=8), "block_shards"),
    (dict(remainder="pad"), "remainder 'pad'")])
def test_loader_options_a_stream_cannot_honour_are_refused(tmp_path, option, message):
    # They were silently ignored.
    paths = write_corpus(tmp_path, [60])
    with pytest.raises(ValueError, match=message):
        open_loader(paths, **option)
    open_loader(paths, shuffle=True).close()  # the default, spelled the torch way


def test_bench_stream_refuses_shuffle(tmp_path, run_stoker):
    paths = write_corpus(tmp_path, [60])
    p = run_stoker("bench", "--stream", *paths, "--seq-len", "64", "--batch-size", "2",
                   "--shuffle", "none", "--batches", "1")
    assert p.returncode == 2 and "shuffle='none' does not apply to a stream" in p.stderr


def test_bestfit_window_is_one_loader_option_with_one_default(tmp_path):
    paths = write_corpus(tmp_path, [200])
    default = open_loader(paths)
    assert default.fingerprint == open_loader(paths, bestfit_window=4096).fingerprint
    assert default.fingerprint != open_loader(paths, bestfit_window=8).fingerprint
    # The stream's own bestfit_window= is the deprecated spelling of the loader's.
    with pytest.warns(DeprecationWarning, match="bestfit_window"):
        stream = stoker.Stream([str(p) for p in paths], shuffle_buffer=64, bestfit_window=8)
    old = stoker.Loader(stream, seq_len=64, batch_size=4, num_workers=1, pack="bestfit", seed=3,
                        output="numpy", rank=0, world_size=1, pin_memory=False)
    assert old.fingerprint == open_loader(paths, bestfit_window=8).fingerprint


def test_no_scan_cache_is_none_and_off_is_deprecated(tmp_path):
    paths = [str(p) for p in write_corpus(tmp_path, [20])]
    assert stoker.Stream(paths, scan_cache=None).options.scan_cache_dir == ""
    with pytest.warns(DeprecationWarning, match="scan_cache=None"):
        assert stoker.Stream(paths, scan_cache="off").options.scan_cache_dir == ""


def test_stream_flags_without_stream_are_refused(tmp_path, run_stoker):
    # They were ignored: `bench DATASET --shuffle-buffer 10` measured the indexed path.
    for command in ("bench", "explain"):
        p = run_stoker(command, tmp_path / "ds", "--seq-len", "8", "--batch-size", "1", "--step",
                       "0", "--shuffle-buffer", "10") if command == "explain" else run_stoker(
            command, tmp_path / "ds", "--shuffle-buffer", "10")
        assert p.returncode == 2, p.stderr
        assert "--shuffle-buffer applies to streams only" in p.stderr
