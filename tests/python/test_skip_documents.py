"""Quarantining single documents on resume (`stoker resume-edit --skip-documents FILE`,
stoker.edit_state(skip_documents=...); docs/plan.md, "Skipping steps on resume"): after the
edit the quarantined documents are never served, every other document of the epoch is served
exactly once, and nothing consumed repeats; the tokens served are the provenance's pieces; the
CLI writes the same edit and `stoker plan --state` prints the same steps."""

import json
import subprocess
from collections import Counter

import numpy as np
import pytest

import stoker
from test_mixture_schedule import mix  # noqa: F401
from test_py_data import datasets  # noqa: F401
from test_resume_edit import SEQ, loaders, source  # noqa: F401
from test_resume_edit_surfaces import cli_steps


def run_steps(group, steps=None):
    """[[pieces of every rank]] of the next `steps` steps (to the epoch's end); each piece a dict
    of its provenance. Checks that each rank's tokens are exactly its pieces' lengths."""
    iters = [iter(x) for x in group]
    out = []
    while steps is None or len(out) < steps:
        step = []
        for it in iters:
            b = next(it, None)
            if b is None:
                return out
            for row, seg in zip(b["provenance"], b["segment_ids"]):
                assert int(np.count_nonzero(np.asarray(seg))) == sum(p["length"] for p in row)
                step += row
        out.append(step)
    return out


def key(p):
    return (str(p["dataset"]), p["document"], p["offset"], p["length"])


def doc(p):
    return (str(p["dataset"]), p["document"])


def ident(p):
    """The piece's document as `stoker trace` names it: its dataset's path, shard, record."""
    return f"{p['source']}:{p['shard']}:{p['record']}"


def test_quarantined_documents_are_never_served_and_the_rest_once(source):  # noqa: F811
    make, kw = source
    ref = run_steps(loaders(make, 2, 2, **kw))
    run = loaders(make, 2, 2, **kw)
    before = run_steps(run, 3)
    state = run[0].state_dict()
    # Three documents served later in the epoch, named as `stoker trace` prints them.
    later = [p for step in ref[6:] for p in step if p["offset"] == 0]
    chosen = [later[0], later[len(later) // 2], later[-1]]
    quarantined = {doc(p) for p in chosen}
    edited = stoker.edit_state(state, skip_documents=[ident(p) for p in chosen])
    assert "skip_documents" not in state["plan_state"]  # the input is left as it was
    resumed = loaders(make, 2, 2, **kw)
    for x in resumed:
        x.load_state_dict(edited)
    first = run_steps(resumed, 2)
    mid = resumed[0].state_dict()
    assert mid["plan_state"]["skip_documents"] == [ident(p) for p in chosen]
    after = first + run_steps(resumed)
    assert len(after) == len(ref) - 3  # the same steps
    served = Counter(key(p) for step in after for p in step)
    assert not quarantined & {(k[0], k[1]) for k in served}  # never served after the resume
    want = Counter(key(p) for step in ref[3:] for p in step if doc(p) not in quarantined)
    assert served == want  # every other document's pieces, once, nothing repeated
    consumed = Counter(key(p) for step in before for p in step)
    assert not set(consumed) & set(served)
    # Step by step: each row is the planned row without the quarantined pieces.
    for got, planned in zip(after, ref[3:]):
        assert [key(p) for p in got] == [key(p) for p in planned if doc(p) not in quarantined]
    # A checkpoint taken after the resume keeps the quarantine.
    again = loaders(make, 2, 2, **kw)
    for x in again:
        x.load_state_dict(mid)
    assert [[key(p) for p in s] for s in run_steps(again)] == [[key(p) for p in s]
                                                               for s in after[2:]]


def test_cli_and_plan_state_agree_with_the_loader(datasets, tmp_path, stoker_cli):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    ref = run_steps(loaders(make, 2, 2))
    run = loaders(make, 2, 2)
    run_steps(run, 3)
    state = run[0].state_dict()
    chosen = [p for step in ref[5:] for p in step if p["offset"] == 0][:2]
    ids = [ident(p) for p in chosen]
    listing = tmp_path / "bad-docs.txt"
    listing.write_text("# quarantined after the spike\n" + "\n".join(ids) + "\n\n")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    out = tmp_path / "new.json"
    r = subprocess.run([stoker_cli, "resume-edit", str(path), "--skip-documents", str(listing),
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    edited = stoker.edit_state(state, skip_documents=ids)
    assert json.loads(out.read_text()) == edited
    resumed = loaders(make, 2, 2)
    for x in resumed:
        x.load_state_dict(edited)
    served = [sorted((p["document"], p["offset"], p["length"]) for p in s)
              for s in run_steps(resumed)]
    printed, written = cli_steps(stoker_cli, tmp_path, [datasets["a"]], edited, 2, 2)
    assert [ps for _, ps in printed] == served
    assert written["skip_documents"] == ids


def test_refusals_name_the_problem(datasets, tmp_path, stoker_cli):  # noqa: F811
    run = loaders(lambda: datasets["a"], 1, 2)
    run_steps(run, 1)
    state = run[0].state_dict()
    with pytest.raises(ValueError, match="expected DATASET:SHARD:RECORD"):
        stoker.edit_state(state, skip_documents=["web-3"])
    edited = stoker.edit_state(state, skip_documents=["web:0:999999"])
    fresh = loaders(lambda: datasets["a"], 1, 2)[0]
    with pytest.raises(ValueError, match=r"skip document 'web:0:999999': no such document in "
                                         r"the datasets \(.*web.* \(\d+ shards\)\)"):
        fresh.load_state_dict(edited)
    empty = tmp_path / "none.txt"
    empty.write_text("# nothing\n")
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    r = subprocess.run([stoker_cli, "resume-edit", str(path), "--skip-documents", str(empty), "-o",
                        str(tmp_path / "x.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "no document id in it" in r.stderr


def test_trace_and_summary_of_the_run_leave_them_out(datasets, tmp_path, stoker_cli):  # noqa: F811
    make = lambda: datasets["a"]  # noqa: E731
    ref = run_steps(loaders(make, 1, 4))
    run = loaders(make, 1, 4)
    before = run_steps(run, 3)
    chosen = [p for step in ref[5:] for p in step if p["offset"] == 0][:2]
    edited = stoker.edit_state(run[0].state_dict(run_record=True),
                               skip_documents=[ident(p) for p in chosen])
    resumed = loaders(make, 1, 4)
    resumed[0].load_state_dict(edited)
    after = run_steps(resumed)
    path = tmp_path / "ckpt.json"
    path.write_text(json.dumps(resumed[0].state_dict(run_record=True)))
    served = [p for step in before + after for p in step]
    r = subprocess.run([stoker_cli, "summary", "--run", str(path), "--json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["steps"] == len(before) + len(after)
    assert summary["tokens"] == sum(p["length"] for p in served)
    assert summary["sources"][0]["documents"] == sum(p["offset"] == 0 for p in served)
    for p in chosen:
        r = subprocess.run([stoker_cli, "trace", "--run", str(path), "--document", ident(p),
                            "--json", "-q"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == []  # planned in a later step, never served
    kept = before[0][0]
    r = subprocess.run([stoker_cli, "trace", "--run", str(path), "--document", ident(kept),
                        "--json", "-q"], capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout)  # one that was served: found


def test_a_row_left_empty_is_served_as_padding(datasets):  # noqa: F811
    """pack="pad" holds one document a row: quarantining it leaves its row empty (all padding),
    and the step count stays the plan's."""
    def make():
        return loaders(lambda: datasets["a"], 1, 2, pack="pad")
    ref = run_steps(make())
    run = make()
    run_steps(run, 2)
    chosen = [row for step in ref[3:] for row in step][:2]
    resumed = make()
    resumed[0].load_state_dict(stoker.edit_state(run[0].state_dict(),
                                                 skip_documents=[ident(p) for p in chosen]))
    it = iter(resumed[0])
    empty, steps = 0, 0
    for b in it:
        steps += 1
        for row, seg in zip(b["provenance"], b["segment_ids"]):
            empty += not row
            assert bool(row) == bool(np.count_nonzero(np.asarray(seg)))
    assert steps == len(ref) - 2
    assert empty == 2
