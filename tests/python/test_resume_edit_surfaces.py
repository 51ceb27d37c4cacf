"""A skip or drop edit (stoker.edit_state, `stoker resume-edit`) honoured beyond the loader's
iteration: ``len(loader)`` / ``steps_remaining()`` / ``steps_per_epoch()`` count without the
skipped steps, and `stoker plan --state` serves none of the skipped steps' rows and leaves dropped
datasets out (PlanBatchPlanner, DropDatasets: src/plan/state_skips.h), giving the loader's own
steps."""

import json
import subprocess
from pathlib import Path

import stoker
from test_mixture_schedule import mix  # noqa: F401
from test_py_data import datasets  # noqa: F401
from test_resume_edit import SEQ, loaders, steps_of


def test_len_leaves_out_the_skipped_steps(datasets):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    full = len(loaders(make, 2, 2)[0])
    run = loaders(make, 2, 2)
    steps_of(run, 3)
    edited = stoker_edit(run[0].state_dict(), (6, 9))
    resumed = loaders(make, 2, 2)
    for x in resumed:
        x.load_state_dict(edited)
    assert len(resumed[0]) == full - 4
    assert resumed[0].steps_per_epoch() == full - 4
    assert resumed[0].steps_per_epoch(1) == full  # the next epoch is whole
    assert resumed[0].steps_remaining() == full - 4 - 3
    assert len(steps_of(resumed)) == full - 4 - 3  # what the iteration yields
    # Another world whose step straddles the skip (rows 20..23): that step counts (served up to
    # the skip, padding after).
    other = loaders(make, 1, 8)
    other[0].load_state_dict(stoker_edit(loaders_at(make, 2, 2, 2), (5, 5)))
    want = other[0].steps_remaining()
    assert want == len(steps_of(loaders_loaded(make, 1, 8, other[0])))


def stoker_edit(state, steps):
    return stoker.edit_state(state, skip_steps=steps)


def loaders_at(make, world, batch, steps):
    run = loaders(make, world, batch)
    steps_of(run, steps)
    return run[0].state_dict()


def loaders_loaded(make, world, batch, like):
    out = loaders(make, world, batch)
    for x in out:
        x.load_state_dict(like.state_dict())
    return out


def cli_steps(cli, tmp_path, source_args, state, world, batch, steps=None):
    """[(step, sorted (document, offset, length) of every rank)] that `stoker plan --state`
    prints from `state` on each rank of `world`, and the state file rank 0 wrote back."""
    per_rank, written = [], None
    for r in range(world):
        path = tmp_path / f"state-{r}.json"
        path.write_text(json.dumps(state))
        args = [cli, "plan", *source_args, "--seq-len", str(SEQ), "--batch-size", str(batch),
                "--world-size", str(world), "--rank", str(r), "--seed", "3", "--state",
                str(path), "--json"] + (["--steps", str(steps)] if steps else [])
        p = subprocess.run(args, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        per_rank.append([json.loads(line) for line in p.stdout.splitlines()])
        written = written or json.loads(path.read_text())
    out = []
    for lines in zip(*per_rank):
        pieces = sorted((d, o, n) for line in lines for row in line["rows"] for _, d, o, n in row)
        out.append((lines[0]["step"], pieces))
    return out, written


def no_dataset(steps):
    return [(s, sorted((d, o, n) for _, d, o, n in ps)) for s, ps in steps]


def test_plan_state_jumps_over_the_skipped_steps(datasets, tmp_path, stoker_cli):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    ref = no_dataset(steps_of(loaders(make, 2, 2)))
    run = loaders(make, 2, 2)
    steps_of(run, 3)
    edited = stoker_edit(run[0].state_dict(), (6, 9))
    # Two steps, then the rest: the written state keeps the skip until it is passed.
    first, written = cli_steps(stoker_cli, tmp_path, [datasets["a"]], edited, 2, 2, steps=2)
    assert first == ref[3:5]
    assert written["skip"][0]["steps"] == "6..9"
    rest, written = cli_steps(stoker_cli, tmp_path, [datasets["a"]], written, 2, 2)
    assert rest == ref[5:6] + ref[10:]
    assert "skip" not in written
    # Another world (1 rank of 8 rows), whose step at row 16 straddles rows 20..23: the loader's
    # steps (that one rows 16..19 and padding).
    state = loaders_at(make, 2, 2, 2)
    edited = stoker_edit(state, (5, 5))
    resumed = loaders(make, 1, 8)
    resumed[0].load_state_dict(edited)
    path = tmp_path / "other.json"
    path.write_text(json.dumps(edited))
    p = subprocess.run([stoker_cli, "plan", datasets["a"], "--seq-len", str(SEQ), "--batch-size",
                        "8", "--seed", "3", "--state", str(path), "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    got = [sorted((d, o, n) for row in json.loads(line)["rows"] for _, d, o, n in row)
           for line in p.stdout.splitlines()]
    assert got == [ps for _, ps in no_dataset(steps_of(resumed))]


def test_plan_state_leaves_a_dropped_source_out(mix, tmp_path, stoker_cli):  # noqa: F811
    kw = dict(seq_len=SEQ, batch_size=2, seed=3, output="numpy", total_steps=60)
    run = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    for _, _b in zip(range(5), run):
        pass
    state = run.state_dict()
    edited = stoker.edit_state(state, drop_source="code")
    # The mixture file without "code", beside the first (its paths are relative).
    spec = json.loads(Path(mix["path"]).read_text())
    del spec["datasets"]["code"]
    for phase in spec["phases"]:
        del phase["weights"]["code"]
    no_code = Path(mix["root"]) / "no-code-cli.json"
    no_code.write_text(json.dumps(spec))
    common = ["--total-steps", "60"]
    by_edit, written = cli_steps(stoker_cli, tmp_path, ["--mixture", mix["path"], *common],
                                 edited, 1, 2, steps=8)
    by_file, _ = cli_steps(stoker_cli, tmp_path, ["--mixture", str(no_code), *common], state, 1,
                           2, steps=8)
    assert by_edit == by_file
    assert written["drop"] == ["code"]
    # The loader restoring the edited state serves the same documents.
    dropped = stoker.Loader(stoker.Mixture(mix["path"]), provenance=True, **kw)
    dropped.load_state_dict(edited)
    served = [sorted((p["document"], p["offset"], p["length"]) for row in b["provenance"]
                     for p in row) for _, b in zip(range(8), dropped)]
    assert [ps for _, ps in by_edit] == served
    # A state dropping a dataset the command was not given is refused, naming them.
    bad = dict(edited, plan_state=dict(edited["plan_state"], drop=["wiki"]))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    p = subprocess.run([stoker_cli, "plan", "--mixture", mix["path"], *common, "--seq-len",
                        str(SEQ), "--batch-size", "2", "--state", str(path)],
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert "the state drops 'wiki', which these datasets do not have (web, code, math)" in p.stderr
