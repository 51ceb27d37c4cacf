"""Mixture files and schedules (docs/plan.md, "Schedules"): stoker.Mixture in the Loader and
stoker.plan, `stoker plan --mixture ... --stats`, provenance naming the phase and each dataset's
epoch, resume across a phase boundary, and one clear error per bad mixture file.

The datasets are test_py_data's (a: letters a..m, b: digits) and a third (c: letters n..z), so the
tokens of a batch say which dataset each row came from, independently of stoker's provenance."""

import json
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import stoker
from test_py_data import (assert_batch_equal, cli_plan, datasets, make_dataset,  # noqa: F401
                          read_documents, reference_batch)

SEQ, BATCH = 64, 4
EOS = stoker.Tokenizer("bytes").eos_id  # 256


@pytest.fixture(scope="module")
def mix(datasets, tmp_path_factory):  # noqa: F811
    root = tmp_path_factory.mktemp("mixture")
    c = make_dataset(root, "math", 90, seed=3, alphabet="nopqrstuvwxyz")
    # Relative paths are relative to the file.
    (root / "data").symlink_to(Path(datasets["a"]).parent)
    spec = {"datasets": {"web": f"data/{Path(datasets['a']).name}", "code": datasets["b"],
                         "math": c},
            "phases": [{"until": "40%", "weights": {"web": 0.7, "code": 0.3, "math": 0}},
                       {"until": "60 steps", "weights": {"web": 0.1, "code": [0.1, 0.5],
                                                         "math": [0.8, 0.4]}},
                       {"weights": {"web": 0.0, "code": 0.5, "math": 0.5}}]}
    path = root / "mix.json"
    path.write_text(json.dumps(spec))
    docs = [datasets["docs_a"], datasets["docs_b"], read_documents(c)]
    return {"path": str(path), "c": c, "docs": docs, "root": root}


def source_of(row):
    """0 (letters a..m), 1 (digits) or 2 (letters n..z): the dataset a row's tokens come from.
    Padding (0) and the bytes tokenizer's EOS (256, between documents) belong to none."""
    t = [int(x) for x in row if x not in (0, EOS)]
    kinds = {0 if ord("a") <= x <= ord("m") else 1 if ord("0") <= x <= ord("9") else 2
             for x in t if chr(x).isalnum()}
    assert len(kinds) == 1, kinds
    return kinds.pop()


def test_loader_and_plan_equal_the_cli_plan_of_the_same_file(mix, stoker_cli):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=5, pack="bestfit")
    total = 100  # steps: "40%" ends at step 40, "60 steps" at step 60
    loader = stoker.Loader(stoker.Mixture(mix["path"]), total_steps=total, **kw)
    ref = cli_plan(stoker_cli, ["--mixture", mix["path"], "--seq-len", SEQ, "--batch-size",
                                BATCH, "--seed", 5, "--pack", "bestfit", "--total-steps", total])
    plan = stoker.plan(stoker.Mixture(mix["path"]), SEQ, BATCH, seed=5, pack="bestfit",
                       total_steps=total)
    assert plan.fingerprint == loader.fingerprint
    assert [json.loads(json.dumps(plan.batch(0, s))) for s in range(len(ref))] == ref
    for batch, pb in zip(loader, ref):
        assert_batch_equal(batch, reference_batch(pb, mix["docs"], SEQ))


def test_each_phase_serves_its_weights(mix):
    total = 100
    loader = stoker.Loader(stoker.Mixture(mix["path"]), seq_len=SEQ, batch_size=BATCH,
                           total_steps=total, output="numpy")
    per_phase = [Counter(), Counter(), Counter()]
    steps = 0
    while steps < 90:  # past one epoch when the epoch is short
        for b in loader:
            phase = 0 if steps < 40 else 1 if steps < 60 else 2
            for row in b["input_ids"]:
                per_phase[phase][source_of(row)] += 1
            steps += 1
            if steps == 90:
                break
    rows = [sum(c.values()) for c in per_phase]
    assert rows == [40 * BATCH, 20 * BATCH, 30 * BATCH]
    # Constant phases: within one row of the weights (docs/plan.md states the tolerance).
    assert abs(per_phase[0][0] - 0.7 * rows[0]) <= 1 and per_phase[0][2] == 0
    assert abs(per_phase[2][1] - 0.5 * rows[2]) <= 1 and per_phase[2][0] == 0
    # The ramp (code 0.1 -> 0.5, math 0.8 -> 0.4) over 80 rows is one ramp step (steps have at
    # least 256 rows): the ramp's midpoint, within one row.
    assert abs(per_phase[1][1] - 0.3 * rows[1]) <= 1
    assert abs(per_phase[1][2] - 0.6 * rows[1]) <= 1


def test_provenance_names_the_phase_and_each_datasets_epoch(mix, stoker_cli):
    loader = stoker.Loader(stoker.Mixture(mix["path"]), seq_len=SEQ, batch_size=BATCH,
                           total_steps=100, provenance=True, output="numpy")
    phases, epochs = set(), Counter()
    for step, b in enumerate(loader):
        for row, pieces in zip(b["input_ids"], b["provenance"]):
            want = 0 if step < 40 else 1 if step < 60 else 2
            for p in pieces:
                assert p["phase"] == want
                assert p["dataset"] == source_of(row)
                epochs[(p["dataset"], p["dataset_epoch"])] += 1
            phases.add(want)
    # code (60 documents) is upsampled: it runs through several epochs of its own while the
    # mixture is in its first.
    assert max(e for d, e in epochs if d == 1) >= 1
    out = subprocess.run([stoker_cli, "explain", "--mixture", mix["path"], "--seq-len", str(SEQ),
                          "--batch-size", str(BATCH), "--total-steps", "100", "--step", "45",
                          "--json"], capture_output=True, text=True, check=True).stdout
    pieces = [p for row in json.loads(out)["rows"] for p in row["pieces"]]
    assert pieces and all(p["phase"] == 1 and "dataset_epoch" in p for p in pieces)
    # The text output says the same, per row.
    text = subprocess.run([stoker_cli, "explain", "--mixture", mix["path"], "--seq-len", str(SEQ),
                           "--batch-size", str(BATCH), "--total-steps", "100", "--step", "45"],
                          capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)["rows"]
    for r, row in enumerate(rows):
        epoch = row["pieces"][0]["dataset_epoch"]
        assert f"  row {r} (dataset_epoch {epoch}, phase 1):" in text


@pytest.mark.parametrize("stop", [38, 41, 59, 61])
def test_resume_across_a_phase_boundary_equals_the_uninterrupted_run(mix, stop):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=1, pack="bestfit", total_steps=100,
              output="numpy", num_workers=2)
    ref = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    want = [b["input_ids"].copy() for _, b in zip(range(stop + 6), ref)]
    first = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    got = [b["input_ids"].copy() for _, b in zip(range(stop), first)]
    state = json.loads(json.dumps(first.state_dict()))
    second = stoker.Loader(stoker.Mixture(mix["path"]), **kw)
    second.load_state_dict(state)
    got += [b["input_ids"].copy() for _, b in zip(range(6), second)]
    assert len(got) == len(want)
    assert all(np.array_equal(x, y) for x, y in zip(got, want))


def test_plan_stats_show_each_phase(mix, stoker_cli):
    out = subprocess.run([stoker_cli, "plan", "--mixture", mix["path"], "--seq-len", str(SEQ),
                          "--batch-size", str(BATCH), "--total-steps", "100", "--stats",
                          "--json"], capture_output=True, text=True, check=True).stdout
    phases = json.loads(out)["phases"]
    assert [(p["first_row"], p["end_row"]) for p in phases] == [(0, 160), (160, 240), (240, 400)]
    names = [d["name"] for d in phases[0]["datasets"]]
    assert names == ["web", "code", "math"]
    web0 = phases[0]["datasets"][0]
    assert web0["rows"] == pytest.approx(112, abs=1) and web0["share"] == pytest.approx(0.7, abs=0.01)
    assert phases[1]["datasets"][2]["end_weight"] == pytest.approx(0.4)
    text = subprocess.run([stoker_cli, "plan", "--mixture", mix["path"], "--seq-len", str(SEQ),
                           "--batch-size", str(BATCH), "--total-steps", "100", "--stats"],
                          capture_output=True, text=True, check=True).stdout
    assert "phase 1: global rows [160, 240)" in text
    assert "math" in text and "0.8000 -> 0.4000" in text


@pytest.mark.parametrize("spec,want", [
    ({"datasets": {"a": "A"}, "weights": {"a": 1}, "extra": 1}, "unknown key 'extra'"),
    ({"datasets": {"a": "A", "b": "B"}, "weights": {"a": 0, "b": 0}},
     "weights: they must sum to a positive number"),
    ({"datasets": {"a": "A", "b": "B"}, "phases": [
        {"until": "50%", "weights": {"a": 1, "b": 1}},
        {"until": "20%", "weights": {"a": 1, "b": 1}}, {"weights": {"a": 1, "b": 1}}]},
     "phases[1]: 'until' is not after the previous phases' ends"),
])
def test_a_bad_mixture_file_is_one_error_naming_the_file_and_the_key(tmp_path, stoker_cli, spec,
                                                                     want):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    p = subprocess.run([stoker_cli, "plan", "--mixture", str(path), "--seq-len", "64",
                        "--batch-size", "2", "--total-steps", "10"], capture_output=True,
                       text=True)
    assert p.returncode == 2, p.stderr
    assert str(path) in p.stderr and want in p.stderr
    with pytest.raises(ValueError, match="bad.json"):
        stoker.Loader(stoker.Mixture(path), seq_len=64, batch_size=2, total_steps=10)


def test_a_dataset_named_twice_is_refused(tmp_path, stoker_cli, datasets):  # noqa: F811
    path = tmp_path / "twice.json"
    path.write_text('{"datasets": {"a": "%s", "a": "%s"}, "weights": {"a": 1}}'
                    % (datasets["a"], datasets["b"]))
    p = subprocess.run([stoker_cli, "plan", "--mixture", str(path), "--seq-len", "64",
                        "--batch-size", "2"], capture_output=True, text=True)
    assert p.returncode == 2 and "key 'a' given twice" in p.stderr, p.stderr


def test_datasets_of_different_tokenizers_are_not_mixed(tmp_path, datasets):  # noqa: F811
    src = tmp_path / "sp.jsonl"
    src.write_text("".join(json.dumps({"text": f"sentence number {i} here"}) + "\n"
                           for i in range(50)))
    model = Path(__file__).resolve().parents[2] / "data" / "sample" / "sample.model"
    sp = tmp_path / "sp"
    stoker.pack([src], sp, str(model))
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"datasets": {"web": datasets["a"], "sp": str(sp)},
                                "weights": {"web": 1, "sp": 1}}))
    with pytest.raises(ValueError, match="tokenized differently.*a mixture needs one tokenizer"):
        stoker.Loader(stoker.Mixture(path), seq_len=64, batch_size=2)


def test_total_tokens_needs_a_mixture(datasets):  # noqa: F811
    with pytest.raises(ValueError, match="go with a stoker.Mixture"):
        stoker.Loader(datasets["a"], seq_len=64, batch_size=2, total_tokens=10**6)


def pieces_by_source(loader, steps):
    """[(source, dataset_epoch, document, offset, length)] of the next `steps` batches."""
    out = []
    for _, b in zip(range(steps), loader):
        for row in b["provenance"]:
            out += [(p["source"], p["dataset_epoch"], p["document"], p["offset"], p["length"])
                    for p in row]
    return out


def test_an_edited_mixture_continues_every_dataset_where_it_stopped(mix, datasets, tmp_path):  # noqa: F811
    a, b, c = datasets["a"], datasets["b"], mix["c"]
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"datasets": {"web": a, "code": b}, "weights": {"web": 1,
                                                                                "code": 1}}))
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=4, pack="bestfit", provenance=True,
              output="numpy")
    before_loader = stoker.Loader(stoker.Mixture(first), **kw)
    before = pieces_by_source(before_loader, 30)
    state = json.loads(json.dumps(before_loader.state_dict()))
    assert len(json.dumps(state)) < 2000  # a few integers per dataset
    # The edit: math added (first: every index moves), web reweighted, code removed.
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({"datasets": {"math": c, "web": a},
                                  "weights": {"math": 1, "web": 3}}))
    after_loader = stoker.Loader(stoker.Mixture(edited), **kw)
    after_loader.load_state_dict(state)
    after = pieces_by_source(after_loader, 200)
    assert {p[0] for p in after} == {a, c}
    # web's epoch at the checkpoint: nothing of it repeated, and it is completed exactly: every
    # token of every document, once.
    epoch = max(e for s, e, *_ in before if s == a)
    web = sorted((d, o, n) for s, e, d, o, n in before + after if s == a and e == epoch)
    assert len(web) == len(set((d, o) for d, o, _ in web))
    lengths = [len(x) for x in datasets["docs_a"]]
    covered = Counter()
    for d, o, n in web:
        covered[d] += n
    assert all(covered[d] == lengths[d] for d in range(len(lengths)) if lengths[d] > 0)
    # A second process resuming the edited run's own checkpoint continues it exactly.
    state2 = after_loader.state_dict()
    want = pieces_by_source(after_loader, 5)
    again = stoker.Loader(stoker.Mixture(edited), **kw)
    again.load_state_dict(state2)
    assert pieces_by_source(again, 5) == want


def test_a_changed_dataset_is_refused_however_the_mixture_file_spells_its_path(tmp_path):
    # The mixture's names identify its datasets (docs/plan.md, "Edits on resume"): a dataset that
    # changed since the checkpoint is refused whether the mixture file that reaches it lies in the
    # same folder or another one (its relative path then spelled differently), never "added".
    data = tmp_path / "data"
    data.mkdir()
    web = make_dataset(data, "web", 40, seed=21, alphabet="abcdefghijklm")
    make_dataset(data, "code", 40, seed=22, alphabet="0123456789")
    first = tmp_path / "runs" / "mix.json"
    first.parent.mkdir()
    first.write_text(json.dumps({"datasets": {"web": "../data/web", "code": "../data/code"},
                                 "weights": {"web": 1, "code": 1}}))
    moved = tmp_path / "other" / "deeper" / "mix.json"
    moved.parent.mkdir(parents=True)
    moved.write_text(json.dumps({"datasets": {"web": "../../data/web", "code": "../../data/code"},
                                 "weights": {"web": 1, "code": 1}}))
    kw = dict(seq_len=SEQ, batch_size=BATCH, output="numpy")
    loader = stoker.Loader(stoker.Mixture(first), **kw)
    next(iter(loader))
    state = loader.state_dict()
    assert [d["name"] for d in state["plan_state"]["datasets"]] == ["web", "code"]
    # web is rewritten with other documents (not an append).
    import shutil
    shutil.rmtree(web)
    make_dataset(data, "web", 40, seed=23, alphabet="abcdefghijklm")
    for path in (first, moved):
        resumed = stoker.Loader(stoker.Mixture(path), **kw)
        with pytest.raises(Exception, match="dataset 'web' changed since the checkpoint"):
            resumed.load_state_dict(state)


def test_the_runs_length_is_the_mixture_epoch(mix):
    # total_steps / total_tokens place the phases and end the run: len() and one iteration are
    # the run the user gave, not a pass over every dataset.
    kw = dict(seq_len=SEQ, batch_size=BATCH, output="numpy")
    loader = stoker.Loader(stoker.Mixture(mix["path"]), total_steps=77, **kw)
    assert len(loader) == 77
    assert sum(1 for _ in loader) == 77
    tokens = 61 * BATCH * SEQ + 5  # 61 steps and 5 tokens: drop_last serves 61 whole steps
    loader = stoker.Loader(stoker.Mixture(mix["path"]), total_tokens=tokens, **kw)
    assert len(loader) == 61
    plan = stoker.plan(stoker.Mixture(mix["path"]), SEQ, BATCH, total_tokens=tokens)
    assert plan.steps_per_epoch() == 61


def test_plan_stats_give_the_phase_weights_over_the_run(mix, stoker_cli):
    args = [stoker_cli, "plan", "--mixture", mix["path"], "--seq-len", str(SEQ), "--batch-size",
            str(BATCH), "--total-steps", "100", "--stats"]
    out = json.loads(subprocess.run(args + ["--json"], capture_output=True, text=True,
                                    check=True).stdout)
    assert out["steps"] == 100  # the run, on which the phase lines are counted too
    web = out["datasets"][0]
    assert "weight" not in web
    assert web["phase_weights"][0] == pytest.approx(0.7)
    assert web["phase_weights"][1] == pytest.approx([0.1, 0.1])
    assert web["phase_weights"][2] == 0
    text = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    assert "(weight 1)" not in text
    assert "(weight by phase 0.7, 0.1 -> 0.1, 0)" in text
    assert "plan epoch 0 (the run: --total-tokens / --total-steps): 400 rows, 100 steps" in text


def test_plan_datasets_give_each_datasets_share_of_the_run(mix):
    plan = stoker.plan(stoker.Mixture(mix["path"]), SEQ, BATCH, total_steps=100)
    shares = [w for _, w in plan.datasets]
    assert shares != [1.0, 1.0, 1.0]
    assert sum(shares) == pytest.approx(1.0)
    # web: 0.7 of phase 0 (160 rows), 0.1 of phase 1 (80 rows), none after: 120 of 400 rows.
    assert shares[0] == pytest.approx(120 / 400, abs=0.01)
