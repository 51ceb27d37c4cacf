"""Steps counted in tokens with provenance, metrics and the edits of a resumed state (docs/plan.md,
"Balanced steps"; issue 45): each microbatch's provenance names exactly its tokens (documents that
carry their own index in their first bytes), metrics count per source what was served, a skip of
steps leaves out whole token steps on every rank at any world size and the rest is served once,
quarantined documents are never served after the edit (and leave the step's figures), and what
is still refused says why."""

import json
from collections import Counter

import numpy as np
import pytest

import stoker

BUDGET = 1024


@pytest.fixture(scope="module")
def tagged(tmp_path_factory):
    """Documents of skewed lengths whose first six bytes are their index (bytes tokenizer)."""
    root = tmp_path_factory.mktemp("token-step-edits")
    rng = np.random.default_rng(11)
    lengths = np.clip(rng.lognormal(np.log(150), 1.0, size=240).astype(int), 8, 2500)
    with open(root / "docs.jsonl", "w") as f:
        for i, n in enumerate(lengths):
            f.write(json.dumps({"text": f"{i:06d}" + "y" * (int(n) - 6)}) + "\n")
    stoker.pack([root / "docs.jsonl"], root / "ds", "bytes", shard_size="16KiB")
    total = int(stoker.inspect(root / "ds")["tokens"])
    assert total == int(lengths.sum()) + len(lengths)  # each document ends with its EOS token
    return str(root / "ds"), [int(n) + 1 for n in lengths]


def loaders(path, world, **kw):
    opts = dict(tokens_per_step=6000, microbatches=2, max_tokens_per_microbatch=BUDGET,
                output="numpy", seed=7, provenance=True)
    opts.update(kw)
    return [stoker.Loader(path, world_size=world, rank=r, **opts) for r in range(world)]


def run(ranks, steps=None):
    """Token steps from where `ranks` stand: per step (index, [(rank, batch copy)])."""
    iters = [iter(r) for r in ranks]
    out = []
    while True:
        batches = [next(it, None) for it in iters]
        if all(b is None for b in batches):
            return out
        assert all(b is not None for b in batches), "ranks ran out of microbatches unevenly"
        if int(batches[0]["microbatch"]) == 0:
            if steps is not None and len(out) == steps:
                return out, batches  # the next step's first microbatches, taken
            out.append((batches[0].step, []))
        for r, b in enumerate(batches):
            assert b.step == out[-1][0]
            out[-1][1].append((r, dict({k: np.array(v) for k, v in b.items() if k != "provenance"},
                                       _provenance=b["provenance"], _state=b.state_after,
                                       _real=b.real_tokens)))


def pieces(steps):
    return [p for _i, batches in steps for _r, b in batches for row in b["_provenance"]
            for p in row]


def check_provenance(b):
    """The microbatch's tokens are exactly its provenance's pieces, each from its document."""
    (row,) = b["_provenance"]
    ids = b["input_ids"][0]
    assert sum(p["length"] for p in row) == b["_real"]
    for p in row:
        assert p["row_offset"] + p["length"] <= BUDGET
        if p["offset"] == 0 and p["length"] >= 6:
            tag = bytes(int(t) for t in ids[p["row_offset"]:p["row_offset"] + 6]).decode()
            assert int(tag) == p["document"]


def test_provenance_names_every_microbatch_and_every_token_once(tagged):
    path, lengths = tagged
    steps = run(loaders(path, 3))
    served = Counter()
    for _i, batches in steps:
        for _r, b in batches:
            check_provenance(b)
    for p in pieces(steps):
        for t in range(p["offset"], p["offset"] + p["length"]):
            served[(p["document"], t)] += 1
    assert len(served) == sum(lengths) and set(served.values()) == {1}


def test_metrics_count_what_each_rank_served(tagged):
    path, _ = tagged
    windows = []
    loader = stoker.Loader(path, tokens_per_step=6000, microbatches=2,
                           max_tokens_per_microbatch=BUDGET, output="numpy", seed=7,
                           world_size=2, rank=1, metrics_every=3,
                           metrics=lambda step, m: windows.append((step, m)))
    real, last_steps = 0, []
    for i, b in enumerate(loader):
        real += b.real_tokens
        if i % 3 == 2:
            last_steps.append(b.step)
    assert windows and [s for s, _m in windows] == last_steps[:len(windows)]
    counted = sum(m["stoker/tokens"] for _s, m in windows)
    assert counted <= real and counted == sum(m["stoker/tokens/ds"] for _s, m in windows)
    for _s, m in windows:
        assert m["stoker/padding_tokens"] == m["stoker/steps"] * BUDGET - m["stoker/tokens"]


def test_a_skip_of_steps_leaves_out_whole_steps_at_any_world_size(tagged):
    path, lengths = tagged
    ref = run(loaders(path, 2))
    assert len(ref) >= 6
    steps, _next = run(loaders(path, 2), 1)  # step 0 served, step 1 begun
    with pytest.raises(ValueError, match="was begun already"):
        stoker.edit_state(_next[0].state_after, skip_steps=(1, 2))
    state = steps[0][1][-1][1]["_state"]  # after step 0's last microbatch
    edited = stoker.edit_state(state, skip_steps=(2, 3))
    for world in (2, 3):
        ranks = loaders(path, world)
        for r in ranks:
            r.load_state_dict(edited)
        remaining, length = ranks[0].steps_remaining(), len(ranks[0])
        rest = run(ranks)
        assert [i for i, _b in rest] == [1] + [i for i, _b in ref[4:]]
        assert remaining == sum(1 for _i, bs in rest for r, _b in bs if r == 0)
        if world == 2:  # len counts the epoch's microbatches less the skipped steps'
            assert length == sum(int(bs[0][1]["microbatches"]) for i, bs in ref
                                 if i not in (2, 3))
        served = Counter((p["document"], p["offset"]) for p in pieces(steps + rest))
        skipped = Counter((p["document"], p["offset"]) for p in pieces(ref[2:4]))
        assert set(served.values()) == {1} and not set(served) & set(skipped)
        assert sum(p["length"] for p in pieces(steps + rest + ref[2:4])) == sum(lengths)


def test_quarantined_documents_leave_every_microbatch_and_the_figures(tagged):
    path, lengths = tagged
    ref = run(loaders(path, 2))
    steps, _next = run(loaders(path, 2), 2)
    state = steps[-1][1][-1][1]["_state"]
    later = [p for p in pieces(ref[4:]) if p["offset"] == 0]
    chosen = [later[0], later[len(later) // 2], later[-1]]
    ids = [f"{p['source']}:{p['shard']}:{p['record']}" for p in chosen]
    edited = stoker.edit_state(state, skip_documents=ids)
    ranks = loaders(path, 3)
    for r in ranks:
        r.load_state_dict(edited)
    rest = run(ranks)
    quarantined = {p["document"] for p in chosen}
    served = Counter((p["document"], p["offset"]) for p in pieces(steps + rest))
    assert set(served.values()) == {1}
    assert not {d for d, _o in served} & quarantined
    gone = sum(lengths[d] for d in quarantined)
    assert sum(p["length"] for p in pieces(steps + rest)) == sum(lengths) - gone
    for _i, batches in rest:
        real = sum(b["_real"] for _r, b in batches)
        trained = sum(int((b["labels"] != -100).sum()) for _r, b in batches)
        for _r, b in batches:
            check_provenance(b)
            assert int(b["global_tokens"]) == real and int(b["global_trained_tokens"]) == trained
    # The state after carries the quarantine on.
    assert rest[-1][1][0][1]["_state"]["plan_state"]["skip_documents"] == ids


def test_cross_document_targets_refusal_says_why(tagged):
    path, _ = tagged
    with pytest.raises(ValueError, match="cross_document_targets: .* an arbitrary one of the "
                       "window.*leave tokens_per_step out"):
        stoker.Loader(path, tokens_per_step=6000, cross_document_targets=True, output="numpy")


def test_plan_stats_state_the_order_displacement_within_its_bound(tagged, run_stoker):
    path, _ = tagged
    common = ("plan", path, "--seq-len", str(BUDGET), "--batch-size", "1", "--tokens-per-step",
              "6000", "--world-size", "4", "--seed", "7", "--stats", "--steps", "100")
    r = run_stoker(*common, "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert 0 < s["order_displacement_max"] <= s["order_displacement_bound"]
    assert s["order_displacement_bound"] < s["bestfit_window_bound"] == 4095
    assert 0 < s["order_displacement_mean"] <= s["order_displacement_max"]
    assert 0 < s["order_displacement_relative"] < 2
    none = json.loads(run_stoker(*common, "--json", "--balance", "none").stdout)
    assert none["order_displacement_max"] == 0  # served in the shuffled order
    text = run_stoker(*common).stdout
    assert "order: displacement in pieces max" in text and "bestfit_window - 1 = 4095" in text


def test_the_cli_writes_the_same_token_step_edits(tagged, tmp_path, run_stoker):
    path, _ = tagged
    steps, _next = run(loaders(path, 2), 1)
    state = steps[0][1][-1][1]["_state"]
    (tmp_path / "state.json").write_text(json.dumps(state))
    r = run_stoker("resume-edit", tmp_path / "state.json", "--skip-steps", "2..3", "-o",
                   tmp_path / "edited.json")
    assert r.returncode == 0, r.stderr
    cli = json.loads((tmp_path / "edited.json").read_text())
    assert cli["plan_state"]["skip"] == stoker.edit_state(state, skip_steps=(2, 3))[
        "plan_state"]["skip"]
    assert cli["plan_state"]["skip"][0]["unit"] == "token_steps"
