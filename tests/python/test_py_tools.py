"""stoker.pack / inspect / verify / plan give what the CLI gives."""

import json
import subprocess

import pytest

import stoker
from test_py_data import cli_plan, datasets, write_jsonl  # noqa: F401


def cli(stoker_cli, *args, check=True):
    return subprocess.run([stoker_cli, *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=check)


def test_pack_writes_the_same_bytes_as_the_cli(stoker_cli, tmp_path):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, 200, seed=3, alphabet="hello wrd")
    result = stoker.pack([src], tmp_path / "py", num_workers=2, shard_size="4KiB")
    cli(stoker_cli, "pack", src, "-o", tmp_path / "cli", "--num-workers", 1, "--shard-size", "4KiB",
        "--progress", "off")
    py_files = sorted(p.name for p in (tmp_path / "py").iterdir())
    assert py_files == sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert len([f for f in py_files if f.endswith(".bin")]) > 1
    for name in py_files:
        if name.endswith((".bin", ".idx")):
            assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert result["manifest"]["shards"] == json.loads(
        (tmp_path / "cli" / "manifest.json").read_text())["shards"]
    assert result["counters"]["documents"] == 200


def test_inspect_equals_the_cli(stoker_cli, datasets):
    assert stoker.inspect(datasets["a"]) == json.loads(
        cli(stoker_cli, "inspect", "--json", datasets["a"]).stdout)
    assert stoker.inspect(datasets["a"], document=3) == json.loads(
        cli(stoker_cli, "inspect", datasets["a"], "--show-document", 3).stdout)


def test_verify_agrees_with_the_cli(stoker_cli, datasets, tmp_path):
    report = stoker.verify(datasets["b"])
    assert report["ok"] and report["problems"] == []
    assert report["documents"] == stoker.inspect(datasets["b"])["documents"]
    assert cli(stoker_cli, "verify", datasets["b"], "--progress", "off").returncode == 0


@pytest.mark.parametrize("pack", ["concat", "bestfit", "pad"])
def test_plan_equals_the_cli(stoker_cli, datasets, pack):
    plan = stoker.plan([(2, datasets["a"]), datasets["b"]], 32, 3, world_size=2, rank=1, seed=5,
                       pack=pack, remainder="pad")
    ref = cli_plan(stoker_cli, [f"2:{datasets['a']}", datasets["b"], "--seq-len", 32,
                                "--batch-size", 3, "--world-size", 2, "--rank", 1, "--seed", 5,
                                "--pack", pack, "--remainder", "pad"])
    got = [json.loads(json.dumps(b)) for b in plan.batches(0)]
    assert got == ref
    stats = json.loads(cli(stoker_cli, "plan", f"2:{datasets['a']}", datasets["b"], "--seq-len",
                           32, "--batch-size", 3, "--world-size", 2, "--seed", 5, "--pack", pack,
                           "--remainder", "pad",  # a mixture's epoch is whole global batches of it
                           "--stats", "--json").stdout)
    mine = plan.stats(0)
    assert mine["fingerprint"] == stats["fingerprint"]
    assert mine["rows"] == stats["rows"]
    assert mine["packing"] == stats["packing"]


def test_plan_state_round_trip(datasets):
    plan = stoker.plan(datasets["a"], 32, 2)
    state = plan.state_dict(0, 6)
    assert state["format"] == "stoker-loader-state"
    assert state["plan_state"]["rows_consumed"] == 6
    assert plan.restore(state) == (0, 6)
    with pytest.warns(DeprecationWarning, match="bare plan state"):
        assert plan.restore(state["plan_state"]) == (0, 6)
    other = stoker.plan(datasets["a"], 32, 2, seed=9)
    with pytest.raises(ValueError, match="fingerprint"):
        other.restore(state)
    assert other.restore(state, force=True) == (0, 6)


def test_plan_and_loader_state_dicts_are_one_format(datasets):
    # A Plan's state loads into a Loader over the same plan, and a Loader's back into the Plan.
    plan = stoker.plan(datasets["a"], 32, 2, seed=3)
    loader = stoker.Loader(datasets["a"], seq_len=32, batch_size=2, seed=3, num_workers=1,
                           output="numpy", rank=0, world_size=1)
    with loader:
        loader.load_state_dict(plan.state_dict(0, 4))
        first = next(iter(loader))
        assert plan.batch(0, 2)["rows"] and loader.epoch == 0
        state = loader.state_dict()
        assert plan.restore(state) == (0, 6)
        ref = stoker.Loader(datasets["a"], seq_len=32, batch_size=2, seed=3, num_workers=1,
                            output="numpy")
        with ref:
            it = iter(ref)
            for _ in range(3):
                want = next(it)
        assert (first["input_ids"] == want["input_ids"]).all()


def test_shuffle_true_false_mean_global_and_none(datasets):
    assert stoker.plan(datasets["a"], 32, 2, shuffle=True).fingerprint == \
        stoker.plan(datasets["a"], 32, 2, shuffle="global").fingerprint
    assert stoker.plan(datasets["a"], 32, 2, shuffle=False).fingerprint == \
        stoker.plan(datasets["a"], 32, 2, shuffle="none").fingerprint
    with pytest.raises(ValueError, match="shuffle"):
        stoker.plan(datasets["a"], 32, 2, shuffle=1)


def test_one_spelling_per_idea_with_the_old_ones_deprecated(stoker_cli, tmp_path, datasets):
    src = tmp_path / "in.jsonl"
    write_jsonl(src, 20, seed=4, alphabet="abc ")
    with pytest.warns(DeprecationWarning, match="threads= is deprecated; use num_workers="):
        stoker.pack([src], tmp_path / "t", threads=1)
    with pytest.warns(DeprecationWarning, match="bad_lines= is deprecated; use on_error="):
        stoker.pack([src], tmp_path / "b", bad_lines="skip")
    with pytest.raises(ValueError, match="num_workers= only"):
        stoker.pack([src], tmp_path / "x", num_workers=2, threads=1)
    with pytest.warns(DeprecationWarning, match="cache_dir=None"):
        stoker.Loader(datasets["a"], seq_len=32, batch_size=2, cache_dir="off",
                      output="numpy").close()
    # The CLI: --num-workers and --on-error; --threads, --workers and --bad-lines still work.
    p = cli(stoker_cli, "pack", src, "-o", tmp_path / "c", "--threads", 1, "--bad-lines", "skip",
            "--progress", "off")
    assert "--threads is deprecated; use --num-workers" in p.stderr
    assert "--bad-lines is deprecated; use --on-error" in p.stderr
    p = cli(stoker_cli, "bench", datasets["a"], "--seq-len", 32, "--batch-size", 2, "--workers",
            1, "--batches", 1, "--warmup-batches", 0)
    assert "--workers is deprecated; use --num-workers" in p.stderr
