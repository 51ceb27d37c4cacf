"""Skipping steps on resume (docs/plan.md, "Skipping steps on resume"): stoker.edit_state and
`stoker resume-edit`. After the edit, the skipped steps' documents are not served, the rest of the
epoch is served exactly once and nothing consumed repeats: on the same world size (a dataset and
a mixture with a schedule) and on another one. Each step is compared, piece by piece, with the
uninterrupted run's provenance."""

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import stoker
from test_mixture_schedule import mix  # noqa: F401
from test_py_data import datasets  # noqa: F401

SEQ = 64


def loaders(source, world, batch, **kw):
    return [stoker.Loader(source(), seq_len=SEQ, batch_size=batch, rank=r, world_size=world,
                          seed=3, provenance=True, output="numpy", **kw) for r in range(world)]


def steps_of(group, steps=None):
    """[(step, sorted pieces of every rank)] of the next `steps` steps (to the epoch's end)."""
    iters = [iter(x) for x in group]
    out = []
    while steps is None or len(out) < steps:
        pieces, step = [], None
        for it in iters:
            b = next(it, None)
            if b is None:
                return out
            step = b.step
            pieces += [(p["dataset"], p["document"], p["offset"], p["length"])
                       for row in b["provenance"] for p in row]
        out.append((step, sorted(pieces)))
    return out


def pieces(steps):
    return Counter(p for _, ps in steps for p in ps)


@pytest.fixture(params=["dataset", "mixture"])
def source(request, datasets, mix):  # noqa: F811
    if request.param == "dataset":
        return lambda: datasets["a"], {}
    return lambda: stoker.Mixture(mix["path"]), {"total_steps": 60}


def test_same_world_serves_all_but_the_skipped_steps_once(source):
    make, kw = source
    ref = steps_of(loaders(make, 2, 2, **kw))
    assert len(ref) > 14
    run = loaders(make, 2, 2, **kw)
    before = steps_of(run, 3)
    state = run[0].state_dict()
    edited = stoker.edit_state(state, skip_steps=(6, 9))
    assert "skip" not in state["plan_state"]  # the input is left as it was
    resumed = loaders(make, 2, 2, **kw)
    for x in resumed:
        x.load_state_dict(edited)
    first = steps_of(resumed, 2)
    assert resumed[0].state_dict()["plan_state"]["skip"][0]["steps"] == "6..9"  # still ahead
    first += steps_of(resumed, 1)  # step 5: the state after it is past the skip (step 10)
    after = first + steps_of(resumed)
    assert "skip" not in resumed[0].state_dict()["plan_state"]  # passed
    # Steps 3..5, then 10.. to the epoch's end: the uninterrupted run's own, unchanged.
    assert after == ref[3:6] + ref[10:]
    skipped = pieces(ref[6:10])
    assert not set(skipped) & set(pieces(after))  # the skipped steps' documents: not served
    assert not set(pieces(before)) & set(pieces(after))  # nothing consumed repeats
    assert pieces(before) + pieces(after) + skipped == pieces(ref)  # the rest: exactly once


def test_another_world_size_skips_the_same_rows(datasets):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    old = loaders(make, 2, 2)  # 4 global rows a step
    old_steps = steps_of(old, 2)
    state = old[0].state_dict()  # at global row 8
    old_ref = old_steps + steps_of(old, 6)  # steps 0..7 of the old world
    edited = stoker.edit_state(state, skip_steps=(4, 5))  # global rows 16..23
    # The new world: 1 rank of 8 rows. Unedited, its steps start at rows 8, 16, 24, ...
    plain = loaders(make, 1, 8)
    plain[0].load_state_dict(state)
    ref = steps_of(plain)
    resumed = loaders(make, 1, 8)
    resumed[0].load_state_dict(edited)
    got = steps_of(resumed)
    assert got == [ref[0]] + ref[2:]  # the step at row 16 (the skipped rows), and only it
    assert Counter(ref[1][1]) == pieces(old_ref[4:6])  # it holds the old world's steps 4 and 5
    assert not set(pieces(old_steps)) & set(pieces(got))


def test_another_world_whose_step_straddles_the_skip_serves_its_rows_before_it(
        datasets):  # noqa: F811
    """W = 2 -> 3: the new world's step at row 14 reaches into the skipped rows 16..23; it serves
    rows 14, 15 and padding (ranks 1 and 2), the next starts at 24: nothing lost, nothing
    repeated, the skipped rows never served."""
    make = lambda: datasets["a"]  # noqa: E731
    rows = steps_of(loaders(make, 1, 1))  # every global row of the epoch, in order
    old = loaders(make, 2, 2)  # 4 global rows a step
    before = steps_of(old, 2)  # rows 0..7
    edited = stoker.edit_state(old[0].state_dict(), skip_steps=(4, 5))  # rows 16..23
    new = loaders(make, 3, 2)  # 6 global rows a step: at rows 8, 14 (reaching 16..19), 24, ...
    for x in new:
        x.load_state_dict(edited)
    end = 24 + (len(rows) - 24) // 6 * 6  # the last step's end (drop_last)
    assert new[0].steps_remaining() == 2 + (end - 24) // 6  # the straddling step counts
    iters = [iter(x) for x in new]
    straddling = None
    after = []
    while True:
        batches = [next(it, None) for it in iters]
        if batches[0] is None:
            break
        after.append((batches[0].step, sorted(
            (p["dataset"], p["document"], p["offset"], p["length"])
            for b in batches for row in b["provenance"] for p in row)))
        if len(after) == 2:
            straddling = [(b["provenance"], b["labels"]) for b in batches]
    assert len(after) == 2 + (end - 24) // 6
    # The straddling step: rank 0 holds rows 14, 15, ranks 1 and 2 padding (no piece, no label).
    assert all(row for row in straddling[0][0])
    for provenance, labels in straddling[1:]:
        assert provenance == [[], []] and (labels == -100).all()
    want = pieces(rows[8:16]) + pieces(rows[24:end])
    assert pieces(after) == want  # every other row from the state on, exactly once
    assert not set(pieces(rows[16:24])) & set(pieces(after))  # the skipped rows: never served
    assert not set(pieces(before)) & set(pieces(after))  # nothing consumed repeats


def test_a_skip_to_the_end_of_the_epoch_ends_it(datasets):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    ref = steps_of(loaders(make, 1, 4))
    run = loaders(make, 1, 4)
    steps_of(run, 2)
    n = len(run[0])
    edited = stoker.edit_state(run[0].state_dict(), skip_steps=(n - 2, n + 5))
    resumed = loaders(make, 1, 4)
    resumed[0].load_state_dict(edited)
    assert steps_of(resumed) == ref[2:n - 2]  # then the epoch ends
    assert resumed[0].epoch == 1
    assert [b.step for _, b in zip(range(2), resumed[0])] == [0, 1]  # the next epoch, whole


def test_a_checkpoint_taken_before_the_skip_keeps_it(datasets):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    ref = steps_of(loaders(make, 1, 4))
    run = loaders(make, 1, 4)
    steps_of(run, 2)
    edited = stoker.edit_state(run[0].state_dict(), skip_steps=(5, 6))
    first = loaders(make, 1, 4)
    first[0].load_state_dict(edited)
    it = iter(first[0])
    b = next(it)  # step 2
    state = b.state_after  # what a trainer adapter saves after the step
    assert state["plan_state"]["skip"][0]["steps"] == "5..6"
    del b, it
    second = loaders(make, 1, 4)
    second[0].load_state_dict(state)
    assert steps_of(second) == ref[3:5] + ref[7:]


def test_a_dropped_source_is_what_a_mixture_file_without_it_gives(mix, tmp_path,  # noqa: F811
                                                                 stoker_cli):
    kw = dict(seq_len=SEQ, batch_size=2, seed=3, provenance=True, output="numpy",
              total_steps=60)
    run = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    steps_of([run], 5)
    state = run.state_dict()
    dropped = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    edited = stoker.edit_state(state, drop_source="code")
    dropped.load_state_dict(edited)
    # The same edit made in the mixture file (docs/plan.md, "Edits on resume").
    spec = json.loads(Path(mix["path"]).read_text())
    del spec["datasets"]["code"]
    for phase in spec["phases"]:
        del phase["weights"]["code"]
    no_code = Path(mix["root"]) / "no-code.json"  # beside it: its paths are relative
    no_code.write_text(json.dumps(spec))
    by_file = stoker.Loader(stoker.Mixture(no_code), **kw)
    by_file.load_state_dict(state)
    got = steps_of([dropped], 10)
    assert got == steps_of([by_file], 10)
    # Its checkpoints keep the drop: a new loader on the first mixture continues the same way.
    again = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    again.load_state_dict(dropped.state_dict())
    assert steps_of([again]) == steps_of([dropped])
    # The CLI writes the same edit; an unknown name is refused, naming the datasets.
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    r = subprocess.run([stoker_cli, "resume-edit", str(path), "--drop-source", "code", "-o",
                        str(tmp_path / "new.json")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "new.json").read_text()) == edited
    with pytest.raises(ValueError, match=r"no dataset of that name \(its datasets: web, code, "
                                         r"math\)"):
        stoker.edit_state(state, drop_source="wiki")


def test_resume_edit_cli_writes_what_edit_state_returns(datasets, tmp_path, stoker_cli):  # noqa: F811
    run = loaders(lambda: datasets["a"], 2, 2)
    steps_of(run, 3)
    state = run[0].state_dict()
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    out = tmp_path / "new.json"
    r = subprocess.run([stoker_cli, "resume-edit", str(path), "--skip-steps", "6..9",
                        "--skip-steps", "12..12", "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = stoker.edit_state(state, skip_steps=[(6, 9), (12, 12)])
    assert json.loads(out.read_text()) == want


@pytest.mark.parametrize("args,message", [
    (["--skip-steps", "6-9"], "give FIRST..LAST"),
    (["--skip-steps", "9..6"], "the last step is before the first"),
    (["--skip-steps", "1..4"], "the state is at step 3 of epoch 0 and step 1 was served already"),
])
def test_resume_edit_cli_refusals_name_the_problem(datasets, tmp_path, stoker_cli, args,  # noqa: F811
                                                   message):
    run = loaders(lambda: datasets["a"], 2, 2)
    steps_of(run, 3)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(run[0].state_dict()))
    r = subprocess.run([stoker_cli, "resume-edit", str(path), *args, "-o",
                        str(tmp_path / "x.json")], capture_output=True, text=True)
    assert r.returncode == 2
    assert message in r.stderr
    assert not (tmp_path / "x.json").exists()


def test_edit_state_refusals(datasets):  # noqa: F811
    run = loaders(lambda: datasets["a"], 1, 2)
    steps_of(run, 3)
    state = run[0].state_dict()
    with pytest.raises(ValueError, match="step 2 was served already"):
        stoker.edit_state(state, skip_steps=(2, 4))
    with pytest.raises(ValueError, match="not a stoker loader state"):
        stoker.edit_state({"x": 1}, skip_steps=(5, 6))
    with pytest.raises(ValueError, match="not a mixture's"):
        stoker.edit_state(state, drop_source="web")
    with pytest.raises(ValueError, match="nothing to edit"):
        stoker.edit_state(state)
