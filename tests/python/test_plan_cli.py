"""`stoker plan` end to end: real Megatron files (written by megatron-core), .npy and nanoGPT .bin.

The CLI path comes from $STOKER_CLI.
"""
import json
import os
import subprocess
from collections import defaultdict

import numpy as np
import pytest

CLI = os.environ.get("STOKER_CLI", "build/stoker")


def run(*args, env=None, check=True):
    full_env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}
    full_env.update(env or {})
    p = subprocess.run([CLI, "plan", *map(str, args)], capture_output=True, text=True,
                       env=full_env, timeout=120)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def steps(*args, **kw):
    return [json.loads(line) for line in run(*args, "--json", **kw).stdout.splitlines()]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("plan")
    from megatron.core.datasets.indexed_dataset import IndexedDatasetBuilder
    import torch

    rng = np.random.default_rng(7)
    lengths = [int(x) for x in rng.lognormal(np.log(30), 1.0, 300).astype(int)]
    lengths[5] = 0  # empty documents are legal and must never be planned
    lengths[17] = 0
    lengths[40] = 500  # longer than a row
    builder = IndexedDatasetBuilder(str(d / "web.bin"), dtype=np.uint16)
    for n in lengths:
        builder.add_document(torch.tensor(rng.integers(0, 1000, n), dtype=torch.int64), [n])
    builder.finalize(str(d / "web.idx"))
    np.save(d / "small.npy", np.arange(12 * 9, dtype=np.uint16).reshape(12, 9))
    np.arange(2000, dtype=np.uint16).tofile(d / "one.bin")
    return {"dir": d, "web": str(d / "web"), "lengths": lengths,
            "small": str(d / "small.npy"), "one": str(d / "one.bin")}


def coverage(batches, dataset=0):
    """(document -> sorted pieces) over rows not marked repeated."""
    cover = defaultdict(list)
    for b in batches:
        for i, row in enumerate(b["rows"]):
            if i in b["repeated"]:
                continue
            for ds, doc, off, n in row:
                if ds == dataset:
                    cover[doc].append((off, n))
    return cover


def assert_exactly_once(cover, lengths, limit=None):
    for doc, n in enumerate(lengths):
        want = min(n, limit) if limit else n
        at = 0
        for off, k in sorted(cover.get(doc, [])):
            assert off == at, f"document {doc}: piece at {off}, expected {at}"
            at += k
        assert at == want, f"document {doc}: {at} of {want} tokens"


@pytest.mark.parametrize("pack", ["concat", "bestfit", "pad"])
@pytest.mark.parametrize("world", [1, 3, 7])
def test_every_token_exactly_once_across_ranks(data, pack, world):
    per_rank = [steps(data["web"], "--seq-len", 64, "--batch-size", 2, "--world-size", world,
                      "--rank", r, "--pack", pack, "--remainder", "pad", "--seed", 3)
                for r in range(world)]
    assert len({len(s) for s in per_rank}) == 1  # equal step counts on every rank
    rows = [row for s in per_rank for b in s for row in b["rows"]]
    assert all(sum(p[3] for p in row) <= 64 for row in rows)
    assert_exactly_once(coverage([b for s in per_rank for b in s]), data["lengths"],
                        limit=64 if pack == "pad" else None)


def test_bestfit_keeps_documents_that_fit_whole(data):
    batches = steps(data["web"], "--seq-len", 64, "--batch-size", 4, "--pack", "bestfit",
                    "--remainder", "pad")
    for doc, pieces in coverage(batches).items():
        n = data["lengths"][doc]
        if n <= 64:
            assert pieces == [(0, n)]
        else:
            assert all(off % 64 == 0 for off, _ in pieces)


def test_state_file_continues_where_the_last_run_stopped(data, tmp_path):
    state = tmp_path / "plan.state"
    args = (data["web"], "--seq-len", 32, "--batch-size", 2, "--seed", 9)
    first = steps(*args, "--steps", 3, "--state", state)
    second = steps(*args, "--steps", 3, "--state", state)
    whole = steps(*args, "--steps", 6)
    assert [b["step"] for b in first] == [0, 1, 2]
    assert [b["step"] for b in second] == [3, 4, 5]
    assert first + second == whole
    saved = json.loads(state.read_text())
    assert saved["format"] == "stoker-plan-state" and saved["rows_consumed"] == 12


def test_elastic_resume_on_another_world_size(data, tmp_path):
    args = (data["web"], "--seq-len", 32, "--seed", 4)
    # The global row order: one rank, one row per step.
    order = [b["rows"][0] for b in steps(*args, "--batch-size", 1)]
    state = tmp_path / "s"
    for r in range(2):  # 2 ranks x 3 rows, 2 steps; every rank writes the same state
        s = tmp_path / f"s{r}"
        steps(*args, "--batch-size", 3, "--world-size", 2, "--rank", r, "--steps", 2, "--state", s)
        state.write_text(s.read_text())
    rest = []
    for r in range(5):  # each rank keeps its own copy of the checkpoint, as on separate hosts
        mine = tmp_path / f"t{r}"
        mine.write_text(state.read_text())
        rest.append(steps(*args, "--batch-size", 2, "--world-size", 5, "--rank", r,
                          "--state", mine, "--steps", 1))
    got = [row for r in range(5) for row in rest[r][0]["rows"]]
    assert got == order[12:22]


def test_fingerprint_mismatch_is_an_error_unless_forced(data, tmp_path):
    state = tmp_path / "s"
    run(data["web"], "--seq-len", 32, "--batch-size", 2, "--steps", 1, "--state", state)
    p = run(data["web"], "--seq-len", 48, "--batch-size", 2, "--state", state, check=False)
    assert p.returncode == 2
    assert "fingerprint" in p.stderr and str(state) in p.stderr and "--force" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    run(data["web"], "--seq-len", 48, "--batch-size", 2, "--state", state, "--steps", 1,
        "--force")


def test_epochs_differ_and_seed_decides(data):
    args = (data["web"], "--seq-len", 64, "--batch-size", 2, "--steps", 4)
    e0 = steps(*args, "--epoch", 0)
    assert e0 == steps(*args, "--epoch", 0)
    assert [b["rows"] for b in e0] != [b["rows"] for b in steps(*args, "--epoch", 1)]
    assert [b["rows"] for b in e0] != [b["rows"] for b in steps(*args, "--seed", 1)]


def test_mixture_follows_the_weights(data):
    batches = steps(f"3:{data['web']}", f"1:{data['small']}", "--seq-len", 16,
                    "--batch-size", 1)
    count = [0, 0]
    for i, b in enumerate(batches, 1):
        count[b["rows"][0][0][0]] += 1
        assert abs(count[0] - 0.75 * i) <= 1 and abs(count[1] - 0.25 * i) <= 1
    stats = json.loads(run(f"3:{data['web']}", f"1:{data['small']}", "--seq-len", 16,
                           "--batch-size", 1, "--stats", "--json").stdout)
    epochs = [d["epochs_in_this_plan_epoch"] for d in stats["datasets"]]
    assert epochs[1] > 1 > epochs[0]  # the small dataset repeats, the large one is subsampled


def test_stats_report_packing_and_shuffle(data):
    shares = {}
    for pack in ["concat", "bestfit", "pad"]:
        s = json.loads(run(data["web"], "--seq-len", 128, "--batch-size", 1, "--pack", pack,
                           "--stats", "--json").stdout)
        shares[pack] = s["packing"]["real_token_share"]
        assert s["packing"]["empty_documents"] == 2
        assert s["datasets"][0]["shuffle"]["mean_source_distance"] > 10
    assert shares["pad"] < shares["bestfit"] <= shares["concat"]
    text = run(data["web"], "--seq-len", 128, "--batch-size", 1, "--stats").stdout
    assert "real tokens" in text and "shards" in text


def test_rank_and_world_size_default_to_the_environment(data):
    args = (data["web"], "--seq-len", 32, "--batch-size", 2, "--steps", 2)
    assert steps(*args, env={"RANK": "2", "WORLD_SIZE": "4"}) == \
        steps(*args, "--rank", 2, "--world-size", 4)


def test_small_dataset_and_remainder_policies(data):
    # 12 documents of 9 tokens: fewer rows than one global batch of 4 x 8.
    p = run(data["small"], "--seq-len", 16, "--batch-size", 4, "--world-size", 8, check=False)
    assert p.returncode == 2 and "--remainder pad" in p.stderr
    per_rank = [steps(data["small"], "--seq-len", 16, "--batch-size", 4, "--world-size", 8,
                      "--rank", r, "--remainder", "pad") for r in range(8)]
    assert all(len(s) == 1 for s in per_rank)
    assert_exactly_once(coverage([b for s in per_rank for b in s]), [9] * 12)
    assert any(s[0]["repeated"] for s in per_rank)


@pytest.mark.parametrize("extra,needle", [
    (["--shuffle", "random"], "--shuffle"),
    (["--rank", "4", "--world-size", "4"], "--rank"),
    (["--seq-len", "0"], "--seq-len"),
])
def test_bad_options_fail_with_one_clear_line(data, extra, needle):
    args = [data["one"], "--seq-len", 16, "--batch-size", 1, *extra]
    p = run(*args, check=False)
    assert p.returncode == 2 and needle in p.stderr


def test_bad_files_name_the_file(data, tmp_path):
    missing = tmp_path / "missing.npy"
    p = run(missing, "--seq-len", 16, "--batch-size", 1, check=False)
    assert p.returncode == 2 and str(missing) in p.stderr
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00garbage")
    p = run(bad, "--seq-len", 16, "--batch-size", 1, check=False)
    assert p.returncode == 2 and str(bad) in p.stderr
    state = tmp_path / "state"
    state.write_text("not json")
    p = run(data["one"], "--seq-len", 16, "--batch-size", 1, "--state", state, check=False)
    assert p.returncode == 2 and str(state) in p.stderr
    p = run("0:" + data["one"], "--seq-len", 16, "--batch-size", 1, check=False)
    assert p.returncode == 2 and "weight" in p.stderr


def _pack(tmp_path, name, n):
    src = tmp_path / f"{name}.jsonl"
    rng = np.random.default_rng(n)
    src.write_text("".join(json.dumps({"text": "w" * int(k)}) + "\n"
                           for k in rng.lognormal(np.log(40), 1.0, n).astype(int) + 1))
    out = tmp_path / name
    subprocess.run([CLI, "pack", str(src), "-o", str(out), "--shard-size", "4KiB",
                    "--progress", "off"], check=True, capture_output=True, timeout=120)
    return out


def _cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=120)


def test_stoker_index_then_plan_gives_identical_batches(tmp_path):
    ds = _pack(tmp_path, "ds", 400)
    manifest_path = ds / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["length_index"]["file"] == "lengths.stkidx"
    assert len(manifest["shards"]) > 1
    args = {pack: (ds, "--seq-len", 64, "--batch-size", 2, "--world-size", 3, "--rank", 1,
                   "--pack", pack, "--shuffle", "block", "--steps", 6)
            for pack in ["concat", "bestfit", "pad"]}
    with_index = {pack: steps(*a) for pack, a in args.items()}
    # The dataset as packed before the length index existed: lengths come from the shards.
    del manifest["length_index"]
    manifest_path.write_text(json.dumps(manifest))
    (ds / "lengths.stkidx").unlink()
    assert {pack: steps(*a) for pack, a in args.items()} == with_index
    p = _cli("index", ds)
    assert p.returncode == 0, p.stderr
    assert json.loads(manifest_path.read_text())["length_index"]["documents"] == 400
    assert {pack: steps(*a) for pack, a in args.items()} == with_index
    assert _cli("index", ds, "--check").returncode == 0


def test_a_damaged_or_stale_length_index_is_one_clear_error(tmp_path):
    ds, other = _pack(tmp_path, "ds", 300), _pack(tmp_path, "other", 301)
    index = ds / "lengths.stkidx"
    good = index.read_bytes()
    # Another dataset's index under this name: the manifest's checksum and counts disagree.
    index.write_bytes((other / "lengths.stkidx").read_bytes())
    p = run(ds, "--seq-len", 64, "--batch-size", 1, check=False)
    assert p.returncode == 2 and str(index) in p.stderr and "stale" in p.stderr
    assert "stoker index" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    # A damaged header.
    index.write_bytes(good[:40] + bytes([good[40] ^ 1]) + good[41:])
    p = run(ds, "--seq-len", 64, "--batch-size", 1, check=False)
    assert p.returncode == 2 and str(index) in p.stderr and "header checksum" in p.stderr
    # A damaged length: its chunk's checksum when the plan first reads it, `stoker index --check`
    # and verify all catch it.
    at = int.from_bytes(good[72:80], "little") + 4 * 5  # document 5's length
    index.write_bytes(good[:at] + bytes([good[at] ^ 1]) + good[at + 1:])
    p = run(ds, "--seq-len", 64, "--batch-size", 1, check=False)
    assert p.returncode == 2 and str(index) in p.stderr, p.stderr
    assert "length chunk 0 (documents 0 to 299) does not match its checksum" in p.stderr
    assert "stoker index" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    for cmd in (("index", ds, "--check"), ("verify", ds)):
        p = _cli(*cmd)
        assert p.returncode == 1 and str(index) in p.stderr and "checksum" in p.stderr, p.stderr
    # `stoker index` rebuilds it.
    assert _cli("index", ds).returncode == 0
    assert index.read_bytes() == good
