"""Steps counted in tokens over a stoker.Mixture (docs/plan.md, "Balanced steps"; issue 45): the
mixture's schedule decides which dataset each document comes from (the tokens say which: web
letters a..m, code digits, math letters n..z), every rank has the same microbatches in a step, a
resume is bit-exact, another world size serves the same tokens, and a checkpoint continues into an
edited mixture (a dataset back in, reweighted; that nothing is served twice is
TokenStepsMixtureTest's, in C++, where pieces name their documents)."""

import json
from collections import Counter

import numpy as np
import pytest

import stoker
from test_py_data import datasets, make_dataset  # noqa: F401
from test_token_steps import epoch_steps

BUDGET, STEP = 64, 512  # a step: 512 tokens, at least 8 rows of the 64-token budget
EOS = stoker.Tokenizer("bytes").eos_id


def source_counts(ids):
    """Tokens per dataset in an array of token ids (padding and EOS belong to none)."""
    out = Counter()
    for x in np.asarray(ids).ravel().tolist():
        if x in (0, EOS) or not chr(x).isalnum():
            continue
        out["web" if "a" <= chr(x) <= "m" else "code" if chr(x).isdigit() else "math"] += 1
    return out


@pytest.fixture(scope="module")
def mix(datasets, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("token-mixture")
    math = make_dataset(root, "math", 90, seed=3, alphabet="nopqrstuvwxyz")
    names = {"web": datasets["a"], "code": datasets["b"], "math": math}
    first = root / "first.json"
    # Math is out of the first 6 steps' rows, code out of the rest.
    first.write_text(json.dumps({"datasets": names, "phases": [
        {"until": "6 steps", "weights": {"web": 0.5, "code": 0.5, "math": 0}},
        {"weights": {"web": 0.5, "code": 0, "math": 0.5}}]}))
    edited = root / "edited.json"
    edited.write_text(json.dumps({"datasets": names,
                                  "weights": {"web": 0.4, "code": 0.3, "math": 0.3}}))
    return {"first": str(first), "edited": str(edited)}


def loaders(path, world, **kw):
    opts = dict(tokens_per_step=STEP, microbatches=2, max_tokens_per_microbatch=BUDGET,
                output="numpy", seed=5)
    opts.update(kw)
    return [stoker.Loader(stoker.Mixture(path), world_size=world, rank=r, **opts)
            for r in range(world)]


def flat(ranks, steps):
    """Every rank's next microbatches for `steps` steps: (step's per-source counts, last batch)."""
    iters = [iter(r) for r in ranks]
    counts, last = [], None
    for _ in range(steps):
        step = Counter()
        while True:
            batches = [next(it) for it in iters]
            for b in batches:
                step += source_counts(b["input_ids"])
            last = batches[0]
            if int(last["microbatch"]) + 1 == int(last["microbatches"]):
                break
        counts.append(step)
    return counts, last


@pytest.mark.parametrize("world", [1, 3])
def test_the_schedule_decides_the_sources_and_ranks_stay_equal(mix, world):
    ranks = loaders(mix["first"], world)
    length = len(ranks[0])  # microbatches of epoch 0, asked before iterating
    steps = epoch_steps(ranks)
    assert len(steps) > 8 and length == sum(len(step[0]) for step in steps)
    per_step = []
    for step in steps:
        assert len({len(mbs) for mbs in step}) == 1, "every rank has the same microbatches"
        c = Counter()
        for mbs in step:
            for m in mbs:
                c += source_counts(m["input_ids"])
        assert sum(c.values()) <= int(step[0][0]["global_tokens"])
        per_step.append(c)
    assert per_step[0]["math"] == 0 and per_step[0]["code"] > 0
    assert all(c["code"] == 0 for c in per_step[6:])  # each step holds >= 8 rows
    assert sum(c["math"] for c in per_step[6:]) > 0


def test_resume_is_bit_exact_and_another_world_serves_the_same_tokens(mix):
    loader = loaders(mix["first"], 2)[1]
    it = iter(loader)
    for _ in range(9):
        batch = next(it)
    state = batch.state_after
    rest = [{k: np.array(v) for k, v in b.items()} for b in it]
    again = loaders(mix["first"], 2)[1]
    again.load_state_dict(state)
    assert again.steps_remaining() == len(rest)
    resumed = [{k: np.array(v) for k, v in b.items()} for b in again]
    assert len(resumed) == len(rest) > 0
    for a, b in zip(resumed, rest):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    # At a step's start, on 3 ranks and then on 5: the same tokens of every source.
    three = loaders(mix["first"], 3)
    _, last = flat(three, 4)
    at_step = last.state_after
    want, _ = flat(three, 3)
    five = loaders(mix["first"], 5)
    for r in five:
        r.load_state_dict(at_step)
    got, _ = flat(five, 3)
    assert sum(got, Counter()) == sum(want, Counter())


def test_an_edited_mixture_continues_from_a_step_start(mix, capfd):
    ranks = loaders(mix["first"], 2)
    before, last = flat(ranks, 10)  # code is out from step 6
    state = json.loads(json.dumps(last.state_after))
    edited = loaders(mix["edited"], 2)
    for r in edited:
        r.load_state_dict(state)
    assert "the checkpoint's mixture differs from this one" in capfd.readouterr().err
    after, last = flat(edited, 6)
    assert sum(c["code"] for c in after) > 0  # code is back, where it stopped
    # A checkpoint of the edited run resumes it exactly with the same file.
    state2 = last.state_after
    want, _ = flat(edited, 3)
    again = loaders(mix["edited"], 2)
    for r in again:
        r.load_state_dict(state2)
    assert flat(again, 3)[0] == want
    # A checkpoint taken in the middle of a step does not go into an edited mixture.
    mid = next(iter(loaders(mix["first"], 2)[0])).state_after
    with pytest.raises(Exception, match="in the middle of a step"):
        loaders(mix["edited"], 2)[0].load_state_dict(mid)


def test_the_cli_plans_a_mixtures_token_steps(mix, run_stoker):
    r = run_stoker("plan", "--mixture", mix["first"], "--seq-len", BUDGET, "--batch-size", 1,
                   "--tokens-per-step", STEP, "--world-size", 3, "--seed", 5, "--stats")
    assert r.returncode == 0, r.stderr
    assert "per-rank cost max/mean: fixed rows" in r.stdout
    r = run_stoker("plan", "--mixture", mix["first"], "--seq-len", BUDGET, "--batch-size", 1,
                   "--tokens-per-step", STEP, "--world-size", 3, "--seed", 5, "--steps", 2)
    assert r.returncode == 0, r.stderr
    assert "epoch 0 step 1 rank 0 microbatch 0/" in r.stdout


def scheduled(mix, tmp_path, names=None):
    """The first mixture file (or one of `names` only) with a batch-size schedule: 512 tokens per
    step for 4 steps' rows, a ramp to 2048 by step 12's, then 2048."""
    spec = json.loads(open(mix["first"]).read())
    if names:
        spec = {"datasets": {n: spec["datasets"][n] for n in names},
                "weights": {n: 1 for n in names}}
    spec["tokens_per_step"] = [{"until": "4 steps", "tokens": 512},
                               {"until": "12 steps", "tokens": [512, "2K"]}, {"tokens": 2000}]
    path = tmp_path / ("sched-" + "-".join(names or ["all"]) + ".json")
    path.write_text(json.dumps(spec))
    return str(path)


@pytest.mark.parametrize("names", [None, ["web"]])
def test_a_batch_size_schedule_declared_in_the_mixture_file(mix, tmp_path, names, run_stoker):
    """`stoker plan` follows the file's schedule: each step holds whole rows until the budget of
    its first row (512 tokens, then a ramp to 2000 between global rows 32 and 96: 4 and 12 steps
    of 8 rows), for a mixture and for a file of one dataset."""
    path = scheduled(mix, tmp_path, names)
    base = ["plan", "--mixture", path, "--seq-len", BUDGET, "--batch-size", 1,
            "--tokens-per-step", STEP, "--world-size", 2, "--seed", 5]
    r = run_stoker(*base, "--stats")
    assert r.returncode == 0, r.stderr
    assert "tokens per step by global row: 512@32,512..2000@96,2000" in r.stdout
    r = run_stoker(*base, "--json", "--steps", 30)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    firsts = [x for x in lines if x["microbatch"] == 0]
    budgets = [x["step_budget"] for x in firsts]  # the epoch's steps (at most 30)
    assert budgets[0] == 512 and budgets[-1] == 2000 and budgets == sorted(budgets)
    assert len(set(budgets)) > 3  # the ramp
    for x in firsts[:-1]:
        assert x["step_budget"] <= x["global_tokens"] < x["step_budget"] + BUDGET
    # The Loader follows it too (test_token_steps_schedule.py: its steps are these).
    first = next(iter(loaders(path, 2)[0]))
    assert int(first["step_budget"]) == 512 == int(first.step_figures["step_budget"])


def test_a_schedule_without_token_steps_is_refused(mix, tmp_path, run_stoker):
    r = run_stoker("plan", "--mixture", scheduled(mix, tmp_path), "--seq-len", BUDGET,
                   "--batch-size", 2)
    assert r.returncode != 0
    assert "give --tokens-per-step too" in r.stderr


def test_provenance_names_each_sources_pieces_and_a_quarantine_holds_over_a_mixture(mix):
    """provenance=True names each microbatch's pieces with their dataset, and a quarantined
    document (stoker.edit_state(skip_documents=...)) is never served after the resume."""

    def take(ranks, rounds):
        its = [iter(r) for r in ranks]
        out = []
        for _ in range(rounds):
            for it in its:  # copies: a batch holds its ring slot while its arrays live
                b = next(it)
                out.append(dict(provenance=b["provenance"], real=b.real_tokens,
                                input_ids=np.array(b["input_ids"])))
        return out

    def pieces_of(batches):
        found = []
        for b in batches:
            (row,) = b["provenance"]
            ids = np.asarray(b["input_ids"])[0]
            assert sum(p["length"] for p in row) == b["real"]
            for p in row:
                kinds = set(source_counts(ids[p["row_offset"]:p["row_offset"] + p["length"]]))
                assert len(kinds) <= 1, "a piece's tokens come from one dataset"
                found.append((p, next(iter(kinds), None)))
        return found

    ref = pieces_of(take(loaders(mix["first"], 2, provenance=True), 40))
    kind_of = {}
    for p, kind in ref:
        if kind is not None:
            assert kind_of.setdefault(p["source"], kind) == kind, "one source, one dataset"
    assert len(kind_of) == 3

    its = [iter(r) for r in loaders(mix["first"], 2, provenance=True)]
    for rounds in range(1, 100):  # to the end of a step after at least 4 microbatches
        last = [next(it) for it in its][-1]
        if rounds >= 4 and int(last["microbatch"]) + 1 == int(last["microbatches"]):
            break
    state = last.state_after
    later = [p for p, _ in pieces_of(take(loaders(mix["first"], 2, provenance=True), 40)[24:])]
    ids = sorted({f"{p['source']}:{p['shard']}:{p['record']}" for p in later[:3]})
    edited = stoker.edit_state(state, skip_documents=ids)
    ranks = loaders(mix["first"], 2, provenance=True)
    for r in ranks:
        r.load_state_dict(edited)
    served = {f"{p['source']}:{p['shard']}:{p['record']}" for p, _ in pieces_of(take(ranks, 32))}
    assert served and not served & set(ids)


def test_cross_document_targets_are_refused_over_a_mixture_as_over_one_dataset(mix):
    with pytest.raises(ValueError, match="cross_document_targets: a token step places documents"):
        loaders(mix["first"], 1, cross_document_targets=True)
