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
    result = stoker.pack([src], tmp_path / "py", threads=2, shard_size="4KiB")
    cli(stoker_cli, "pack", src, "-o", tmp_path / "cli", "--threads", 1, "--shard-size", "4KiB",
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
                       pack=pack, drop_last=False)
    ref = cli_plan(stoker_cli, [f"2:{datasets['a']}", datasets["b"], "--seq-len", 32,
                                "--batch-size", 3, "--world-size", 2, "--rank", 1, "--seed", 5,
                                "--pack", pack, "--remainder", "pad"])
    got = [json.loads(json.dumps(b)) for b in plan.batches(0)]
    assert got == ref
    stats = json.loads(cli(stoker_cli, "plan", f"2:{datasets['a']}", datasets["b"], "--seq-len",
                           32, "--batch-size", 3, "--world-size", 2, "--seed", 5, "--pack", pack,
                           "--stats", "--json").stdout)
    mine = plan.stats(0)
    assert mine["fingerprint"] == stats["fingerprint"]
    assert mine["rows"] == stats["rows"]
    assert mine["packing"] == stats["packing"]


def test_plan_state_round_trip(datasets):
    plan = stoker.plan(datasets["a"], 32, 2)
    state = plan.state_dict(0, 6)
    assert state["format"] == "stoker-plan-state" and state["rows_consumed"] == 6
    assert plan.restore(state) == (0, 6)
    other = stoker.plan(datasets["a"], 32, 2, seed=9)
    with pytest.raises(ValueError, match="fingerprint"):
        other.restore(state)
    assert other.restore(state, force=True) == (0, 6)
