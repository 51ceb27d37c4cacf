"""A batch-size schedule in the mixture file, followed by stoker.Loader (docs/plan.md, "Balanced
steps"; issue 45): tokens per step that stay 512 for 4 steps' rows, ramp to 2000 by 12 steps'
rows, then stay there (test_token_steps_mixture.scheduled). Each step's budget (the batch's
`step_budget`) is the schedule's value at the step's first global row, its tokens reach it; every
document is served once per epoch; a resume just before or just after a change is bit-exact, at
another world size exactly once; `stoker plan` prints the Loader's steps; another schedule is
refused naming it."""

import json
from collections import Counter

import numpy as np
import pytest

import stoker
from test_py_data import datasets  # noqa: F401
from test_token_steps_mixture import BUDGET, STEP, loaders, mix, scheduled  # noqa: F401

ROWS_PER_STEP = STEP // BUDGET  # 8: what the file's "N steps" count in rows
MICROBATCH_BITS = 16  # a token-step position: (first row << 16) | microbatch


def budget_at(row):
    """The schedule of `scheduled`, by hand: 512 until row 32, 512 -> 2000 linearly (whole
    tokens, rounded down) over rows [32, 96), then 2000."""
    if row < 4 * ROWS_PER_STEP:
        return 512
    if row < 12 * ROWS_PER_STEP:
        return 512 + (row - 32) * (2000 - 512) // 64
    return 2000


def serve(ranks, steps=None):
    """Every rank's microbatches, step by step, to the epoch's end (or `steps` steps): per step,
    its first global row and per rank the copied microbatches, each with its real tokens and the
    state after it."""
    iters = [iter(r) for r in ranks]
    out, first = [], None
    while steps is None or len(out) < steps or (out and not out[-1]["done"]):
        batches = [next(it, None) for it in iters]
        if all(b is None for b in batches):
            break
        assert all(b is not None for b in batches), "ranks ran out of microbatches unevenly"
        if int(batches[0]["microbatch"]) == 0 or not out:  # (a resume may start mid-step)
            out.append({"first": first, "ranks": [[] for _ in ranks], "done": False})
        for r, b in enumerate(batches):
            ids = np.array(b["input_ids"]).ravel()
            out[-1]["ranks"][r].append(dict({k: np.array(v) for k, v in b.items()},
                                            _step=b.step, _real=b.real_tokens,
                                            _tokens=ids[:b.real_tokens],
                                            _state=b.state_after))
        last = batches[0]
        if int(last["microbatch"]) + 1 == int(last["microbatches"]):
            out[-1]["done"] = True
            state = last.state_after["plan_state"]
            first = state["rows_consumed"] >> MICROBATCH_BITS if state["epoch"] == 0 else None
    return out


def rank_of(path, world, rank):
    """One rank's Loader, with the options of test_token_steps_mixture.loaders."""
    return stoker.Loader(stoker.Mixture(path), world_size=world, rank=rank, tokens_per_step=STEP,
                         microbatches=2, max_tokens_per_microbatch=BUDGET, output="numpy", seed=5)


def tokens_of(steps):
    """The multiset of the real tokens served in `steps`, over every rank."""
    return Counter(t for s in steps for mbs in s["ranks"] for m in mbs
                   for t in m["_tokens"].tolist())


@pytest.mark.parametrize("names,world", [(None, 2), (["web"], 3)])
def test_the_loader_follows_the_schedule(mix, tmp_path, datasets, names, world):  # noqa: F811
    path = scheduled(mix, tmp_path, names)
    ranks = loaders(path, world)
    length = len(ranks[0])
    steps = serve(ranks)
    steps[0]["first"] = 0
    assert length == sum(len(s["ranks"][0]) for s in steps)
    budgets = []
    for k, s in enumerate(steps):
        mbs = [m for r in s["ranks"] for m in r]
        assert len({len(r) for r in s["ranks"]}) == 1, "every rank has the step's microbatches"
        figures = {(int(m["step_budget"]), int(m["global_tokens"])) for m in mbs}
        assert len(figures) == 1, "every microbatch of the step carries the step's figures"
        budget, global_tokens = figures.pop()
        assert budget == budget_at(s["first"]), f"step {k} starts at row {s['first']}"
        assert sum(m["_real"] for m in mbs) == global_tokens
        assert global_tokens < budget + BUDGET  # whole rows until the budget is reached
        if k + 1 < len(steps):
            assert global_tokens >= budget
        budgets.append(budget)
    assert budgets[0] == 512 and max(budgets) == 2000 and budgets == sorted(budgets)
    assert len(set(budgets)) > 3, "the ramp"
    assert any(b > 512 for b in budgets[:12]), "steps grow from row 32 on"
    if names == ["web"]:  # one dataset: its epoch is the plan's; every token once
        want = Counter(np.concatenate(datasets["docs_a"]).tolist())
        assert tokens_of(steps) == want


def test_resume_just_before_and_after_a_change_is_bit_exact(mix, tmp_path):
    path = scheduled(mix, tmp_path)
    steps = serve(loaders(path, 2))
    steps[0]["first"] = 0
    # The steps that start last before a change (rows 32, 96) and first after it.
    marks = []
    for change in (32, 96):
        after = next(k for k, s in enumerate(steps) if s["first"] >= change)
        marks += [after - 1, after]
    for k in marks:
        assert 0 < k < len(steps) - 3
        at_start = steps[k - 1]["ranks"][1][-1]["_state"]  # the state before step k
        in_step = steps[k]["ranks"][1][0]["_state"]  # after its first microbatch
        for state, skip in ((at_start, 0), (in_step, 1)):
            again = rank_of(path, 2, 1)
            again.load_state_dict(json.loads(json.dumps(state)))
            want = [m for s in steps[k:k + 3] for m in s["ranks"][1]][skip:]
            it = iter(again)
            for w in want:
                got = next(it)
                assert int(got["step_budget"]) == int(w["step_budget"])
                for key in w:
                    if not key.startswith("_"):
                        np.testing.assert_array_equal(np.array(got[key]), w[key],
                                                      err_msg=f"step {k} {key}")


def test_resume_at_another_world_size_serves_the_rest_once(mix, tmp_path, datasets):  # noqa: F811
    path = scheduled(mix, tmp_path, ["web"])
    want = Counter(np.concatenate(datasets["docs_a"]).tolist())
    steps = serve(loaders(path, 2))
    steps[0]["first"] = 0
    k = next(k for k, s in enumerate(steps) if s["first"] >= 32)  # the first step of the ramp
    first_microbatches = dict(steps[k + 1], ranks=[r[:1] for r in steps[k + 1]["ranks"]])
    # At step k+1's start, and in its middle (after its first microbatch on both ranks).
    for state, done in ((steps[k]["ranks"][0][-1]["_state"], steps[:k + 1]),
                        (steps[k + 1]["ranks"][0][0]["_state"],
                         steps[:k + 1] + [first_microbatches])):
        three = loaders(path, 3)
        for r in three:
            r.load_state_dict(json.loads(json.dumps(state)))
        rest = serve(three)
        assert tokens_of(done) + tokens_of(rest) == want
        for s in rest[1:]:  # the new world follows the schedule too
            if s["first"] is not None:
                assert {int(m["step_budget"]) for r in s["ranks"] for m in r} == {
                    budget_at(s["first"])}


def test_the_cli_prints_the_loaders_steps(mix, tmp_path, run_stoker):
    path = scheduled(mix, tmp_path)
    r = run_stoker("plan", "--mixture", path, "--seq-len", BUDGET, "--batch-size", 1,
                   "--tokens-per-step", STEP, "--microbatches", 2, "--world-size", 2, "--seed",
                   5, "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    got = [m for s in serve(loaders(path, 2)) for m in s["ranks"][0]]
    assert len(lines) == len(got)
    for line, m in zip(lines, got):
        assert (line["step"], line["microbatch"], line["microbatches"], line["step_budget"],
                line["global_tokens"]) == (m["_step"], int(m["microbatch"]),
                                           int(m["microbatches"]), int(m["step_budget"]),
                                           int(m["global_tokens"]))
        assert sum(p[3] for p in line["pieces"]) == m["_real"]


def test_another_schedule_and_no_token_steps_are_refused(mix, tmp_path):
    path = scheduled(mix, tmp_path)
    steps = serve(loaders(path, 2), steps=6)
    state = json.loads(json.dumps(steps[-1]["ranks"][0][-1]["_state"]))
    other = tmp_path / "other.json"
    spec = json.loads(open(path).read())
    spec["tokens_per_step"][1]["tokens"] = [512, "4K"]
    other.write_text(json.dumps(spec))
    with pytest.raises(Exception, match="tokens_per_step_schedule"):
        rank_of(str(other), 2, 0).load_state_dict(state)
    assert "tokens_per_step_schedule=512@32,512..2000@96,2000" in state["plan_state"]["options"]
    with pytest.raises(ValueError, match="needs steps counted in tokens: give tokens_per_step"):
        stoker.Loader(stoker.Mixture(path), seq_len=BUDGET, batch_size=2, output="numpy")
    with pytest.raises(ValueError, match="batch-size schedule needs steps counted in tokens"):
        stoker.plan(stoker.Mixture(path), seq_len=BUDGET, batch_size=2)
