"""The run record and `stoker trace` (docs/lineage.md): the record a Loader's checkpoint carries
rebuilds every plan of the run, across an elastic resume (another world size) and a mixture edit,
and `stoker trace` from it names the same pieces the loader itself reported for each batch it
served (provenance=True). The Parquet file is read back with pyarrow; --document finds back every
step that saw a document (steps -> documents -> steps)."""

import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import stoker
from test_provenance import pack

KEYS = ("source", "shard", "record", "document", "offset", "length", "row_offset")


def served(loader, steps, rank_rows):
    """Runs `steps` batches of `loader`, recording each piece as (rank 0's) provenance gives it."""
    out = []
    for _, batch in zip(range(steps), loader):
        out.append([[{k: p[k] for k in KEYS} | {"phase": p.get("phase")} for p in row]
                    for row in batch["provenance"]])
        assert len(batch["provenance"]) == rank_rows
    return out


def loader(datasets, world_size, **kw):
    return stoker.Loader(datasets, seq_len=64, batch_size=2, num_workers=1, rank=0,
                         world_size=world_size, output="numpy", pin_memory=False,
                         provenance=True, **kw)


def traced(path: Path, names: dict):
    """The trace's rank-0 pieces per run step, shaped as served() shapes them."""
    t = pq.read_table(path).to_pylist()
    steps = defaultdict(lambda: defaultdict(list))
    for r in t:
        if r["rank"] == 0:
            steps[r["step"]][r["row"]].append(
                {"source": names[r["dataset"]], "shard": r["shard"], "record": r["record"],
                 "document": r["document"], "offset": r["offset"], "length": r["length"],
                 "row_offset": r["row_offset"], "phase": r["phase"]})
    return {s: [rows[k] for k in sorted(rows)] for s, rows in steps.items()}, t


def test_trace_of_a_run_record_agrees_with_what_the_loader_served(tmp_path, stoker_cli):
    a, b = str(pack(tmp_path, "a", 300)), str(pack(tmp_path, "b", 120))
    first = loader([(2.0, a), (1.0, b)], world_size=2)
    seen = served(first, 3, 2)
    assert "run_record" not in first.state_dict()  # the state stays a few integers
    state = first.state_dict(run_record=True)
    record = state["run_record"]
    assert record["format"] == "stoker-run-record" and record["step"] == 3
    assert [s["step"] for s in record["segments"]] == [0]
    assert record["segments"][0]["fingerprint"] == first.fingerprint
    # Elastic resume: 4 ranks from step 3.
    second = loader([(2.0, a), (1.0, b)], world_size=4)
    second.load_state_dict(json.loads(json.dumps(state)))
    seen += served(second, 2, 2)
    # A mixture edit from step 5 on: b's weight raised, a dataset c added.
    c = str(pack(tmp_path, "c", 80))
    third = loader([(1.0, a), (3.0, b), (1.0, c)], world_size=4)
    third.load_state_dict(second.state_dict(run_record=True))
    seen += served(third, 3, 2)
    final = third.state_dict(run_record=True)
    rec = final["run_record"]
    assert [s["step"] for s in rec["segments"]] == [0, 3, 5] and rec["step"] == 8
    assert [s["options"]["world_size"] for s in rec["segments"]] == [2, 4, 4]
    assert rec["segments"][2]["datasets"][1]["weight"] == 3.0
    assert [d["name"] for d in rec["segments"][2]["datasets"]] == [a, b, c]
    assert all(len(d["id"]) == 16 for d in rec["segments"][2]["datasets"])
    assert rec["segments"][2]["resume"]["fingerprint"] == second.fingerprint
    assert third.run_record() == rec
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(final))

    out = tmp_path / "trace.parquet"
    p = subprocess.run([stoker_cli, "trace", "--run", str(state_file), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    names = {a: a, b: b, c: c}
    by_step, rows = traced(out, names)
    assert sorted(by_step) == list(range(8))
    assert any(p["source"] == c for step in seen[5:] for row in step for p in row)
    for step, want in enumerate(seen):
        got = [[{k: v for k, v in piece.items() if k != "phase"} for piece in row]
               for row in by_step[step]]
        assert got == [[{k: v for k, v in piece.items() if k != "phase"} for piece in row]
                       for row in want], f"step {step}"
    # Every rank of every step is there: 2 ranks, then 4.
    assert {(r["step"], r["rank"]) for r in rows} == {
        (s, k) for s in range(8) for k in range(2 if s < 3 else 4)}
    schema = pq.read_schema(out)
    for column in ("step", "rank", "row", "dataset", "shard", "document", "offset", "length",
                   "epoch", "dataset_epoch"):
        assert column in schema.names

    # Steps -> documents -> steps: every piece of a few documents is found back by --document.
    for r in rows[:: max(1, len(rows) // 6)]:
        q = subprocess.run([stoker_cli, "trace", "--run", str(state_file), "--document",
                            f"{r['dataset']}:{r['shard']}:{r['record']}", "--json"],
                           capture_output=True, text=True, timeout=120)
        assert q.returncode == 0, q.stderr
        hits = json.loads(q.stdout)
        want = [x for x in rows if (x["dataset"], x["document"]) == (r["dataset"], r["document"])]
        assert [(h["step"], h["rank"], h["row"], h["offset"]) for h in hits] == [
            (x["step"], x["rank"], x["row"], x["offset"]) for x in want]


def test_a_run_record_keeps_every_plan_option(tmp_path, stoker_cli):
    """The record keeps every row of the plan's option table (pad_each_document_to and
    max_documents_per_row shape the rows too), and `trace --run` reads each back by its row; a
    record written before a row was kept (the key absent) rebuilds with its default."""
    a = str(pack(tmp_path, "a", 300))
    ld = loader(a, world_size=2, pack="bestfit", pad_each_document_to=4, max_documents_per_row=3)
    seen = served(ld, 3, 2)
    record = ld.state_dict(run_record=True)["run_record"]
    options = record["segments"][0]["options"]
    assert options["pad_each_document_to"] == 4 and options["max_documents_per_row"] == 3
    assert "rank" not in options
    plan_rows = {r["name"] for r in stoker._stoker.option_table("plan") if r["default"] is not None}
    assert plan_rows - {"rank"} <= set(options)
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(record))
    out = tmp_path / "trace.parquet"
    p = subprocess.run([stoker_cli, "trace", "--run", str(state_file), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    by_step, _ = traced(out, {a: a})
    # row_offset left out: trace counts it without the documents' padding (a known gap).
    drop = ("phase", "row_offset")
    for step, want in enumerate(seen):
        assert [[{k: v for k, v in x.items() if k not in drop} for x in row]
                for row in by_step[step]] == [[{k: v for k, v in x.items() if k not in drop}
                                               for x in row] for row in want], f"step {step}"
    # An older record without those keys: its plan is the default one, which this is not.
    for key in ("pad_each_document_to", "max_documents_per_row"):
        del options[key]
    state_file.write_text(json.dumps(record))
    p = subprocess.run([stoker_cli, "trace", "--run", str(state_file), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "fingerprint" in p.stderr


def test_trace_from_plan_flags_agrees_with_explain(tmp_path, stoker_cli):
    a, b = pack(tmp_path, "a", 300), pack(tmp_path, "b", 120)
    flags = [f"2:{a}", f"1:{b}", "--seq-len", "64", "--batch-size", "2", "--pack", "bestfit",
             "--seed", "5", "--world-size", "3"]
    out = tmp_path / "t.parquet"
    p = subprocess.run([stoker_cli, "trace", *flags, "--steps", "2..9", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = pq.read_table(out).to_pylist()
    assert {r["step"] for r in rows} == set(range(2, 10))
    for step, rank in ((2, 0), (5, 1), (9, 2)):
        e = subprocess.run([stoker_cli, "explain", *flags, "--rank", str(rank), "--step",
                            str(step), "--json"], capture_output=True, text=True, timeout=120)
        assert e.returncode == 0, e.stderr
        want = [(i, p["source"], p["shard"], p["shard_path"], p["record"], p["document"],
                 p["offset"], p["length"], p["row_offset"], p["dataset_epoch"])
                for i, row in enumerate(json.loads(e.stdout)["rows"]) for p in row["pieces"]]
        got = [(r["row"], r["dataset"], r["shard"], r["shard_path"], r["record"], r["document"],
                r["offset"], r["length"], r["row_offset"], r["dataset_epoch"])
               for r in rows if (r["step"], r["rank"]) == (step, rank)]
        assert got == want


def test_trace_refusals_say_what_to_do(tmp_path, stoker_cli):
    a, b = pack(tmp_path, "a", 300), pack(tmp_path, "b", 120)
    ld = loader([str(a)], world_size=1)
    served(ld, 2, 2)
    state = ld.state_dict(run_record=True)
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({k: v for k, v in state.items() if k != "run_record"}))
    p = subprocess.run([stoker_cli, "trace", "--run", str(bare), "-o", str(tmp_path / "x.pq")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "has no \"run_record\"" in p.stderr
    moved = state["run_record"]
    moved["segments"][0]["datasets"][0]["path"] = str(b)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(moved))
    p = subprocess.run([stoker_cli, "trace", "--run", str(wrong), "-o", str(tmp_path / "x.pq")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "not those the run used" in p.stderr, p.stderr
    assert not (tmp_path / "x.pq").exists()
    p = subprocess.run([stoker_cli, "trace", str(a), "--seq-len", "64", "--batch-size", "2",
                        "--document", "nope:0:1"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "no such dataset" in p.stderr
    p = subprocess.run([stoker_cli, "trace", str(a), "--seq-len", "64", "--steps", "0..1",
                        "-o", str(tmp_path / "y.pq")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--batch-size" in p.stderr


def test_summary_totals_equal_a_provenance_recount(tmp_path, stoker_cli):
    a, b = str(pack(tmp_path, "a", 300)), str(pack(tmp_path, "b", 120))
    mix = tmp_path / "mix.json"
    mix.write_text(json.dumps({"datasets": {"web": a, "code": b}, "phases": [
        {"until": "50%", "weights": {"web": 0.8, "code": 0.2}},
        {"weights": {"web": 0.2, "code": 0.8}}]}))
    ld = stoker.Loader(stoker.Mixture(str(mix)), total_steps=20, seq_len=64, batch_size=3,
                       num_workers=1, rank=0, world_size=1, output="numpy", pin_memory=False,
                       provenance=True, pack="bestfit")
    want = defaultdict(lambda: [0, 0])  # (phase, source) -> [tokens, documents]
    rows = 0
    for _, batch in zip(range(14), ld):
        for row in batch["provenance"]:
            rows += 1
            for p in row:
                name = {a: "web", b: "code"}[p["source"]]
                want[(p["phase"], name)][0] += p["length"]
                want[(p["phase"], name)][1] += p["offset"] == 0
    assert {phase for phase, _ in want} == {0, 1}
    state = tmp_path / "state.json"
    state.write_text(json.dumps(ld.state_dict(run_record=True)))
    html = tmp_path / "summary.html"
    p = subprocess.run([stoker_cli, "summary", "--run", str(state), "--until-step", "14",
                        "--json", "--html", str(html)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["rows"] == rows and s["until_step"] == 14
    assert s["tokens"] == sum(t for t, _ in want.values())
    assert s["tokens"] + s["padding_tokens"] == rows * 64
    for src in s["sources"]:
        assert src["tokens"] == sum(t for (_, n), (t, _) in want.items() if n == src["name"])
    for ph in s["phases"]:
        for src in ph["sources"]:
            assert [src["tokens"], src["documents"]] == want.get((ph["phase"], src["name"]),
                                                                 [0, 0])
    page = html.read_text()
    assert "<svg" in page and "web" in page and "code" in page
    assert "<script" not in page and "src=" not in page and "href=" not in page
    # The default length is the steps the record says the run took.
    q = subprocess.run([stoker_cli, "summary", "--run", str(state), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert json.loads(q.stdout)["tokens"] == s["tokens"]


def test_trace_of_a_chat_pack_agrees_with_the_loader(tmp_path, stoker_cli):
    # A chat pack: long conversations are dropped by default (long_documents="auto"); the
    # record's plan must drop the same ones.
    from chat_testlib import make_qwen_models, pack as chat_pack, records, write_jsonl

    model = make_qwen_models(tmp_path / "models")["qwen2_5"]
    rows = records() * 12 + [{"messages": [{"role": "user", "content": "long " * 3},
                                          {"role": "assistant", "content": "word " * 300}]}]
    out = tmp_path / "sft"
    r = chat_pack(stoker_cli, write_jsonl(tmp_path / "chats.jsonl", rows), "-o", out,
                  "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    ld = loader([str(out)], world_size=2, pack="bestfit")
    seen = served(ld, 4, 2)
    state = tmp_path / "state.json"
    state.write_text(json.dumps(ld.state_dict(run_record=True)))
    trace = tmp_path / "chat.parquet"
    p = subprocess.run([stoker_cli, "trace", "--run", str(state), "-o", str(trace)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    by_step, _ = traced(trace, {str(out): str(out)})
    assert sorted(by_step) == [0, 1, 2, 3]
    for step, want in enumerate(seen):
        assert by_step[step] == want, f"step {step}"
    # The whole epoch from the plan flags: every conversation longer than a row is left out (the
    # loader's default for chat data), every other one is there.
    whole = tmp_path / "epoch.parquet"
    p = subprocess.run([stoker_cli, "trace", str(out), "--seq-len", "64", "--batch-size", "2",
                        "--world-size", "2", "--pack", "bestfit", "-o", str(whole)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    traced_docs = set(pq.read_table(whole, columns=["document"]).column(0).to_pylist())
    n = stoker.inspect(out)["documents"]
    lengths = [len(stoker.inspect(out, document=i)["tokens"]) for i in range(n)]
    long_docs = {i for i, length in enumerate(lengths) if length > 64}
    assert long_docs and not long_docs & traced_docs
    assert len(traced_docs) > 0.8 * (n - len(long_docs))


def test_trace_and_summary_flag_errors_name_the_flag(tmp_path, stoker_cli):
    a = pack(tmp_path, "a", 60)
    base = [stoker_cli, "trace", str(a), "--seq-len", "64", "--batch-size", "2"]
    for steps, says in (("9..3", "B is before A"), ("x..3", "expected A..B"), ("1-2", "A..B")):
        p = subprocess.run(base + ["--steps", steps, "--document", f"{a}:0:1"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2 and "--steps" in p.stderr and says in p.stderr, p.stderr
    p = subprocess.run(base + ["--document", "a:1"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "DATASET:SHARD:RECORD" in p.stderr
    p = subprocess.run(base, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "-o FILE.parquet" in p.stderr
    # --document by the dataset's directory name and the shard number: the record's steps.
    p = subprocess.run(base + ["--document", "a:0:3", "--steps", "0..3"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([stoker_cli, "summary", str(a), "--seq-len", "64", "--batch-size", "2",
                        "--run", str(tmp_path / "missing.json")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0 and "missing.json" in p.stderr
    p = subprocess.run([stoker_cli, "summary", str(a), "--seq-len", "64", "--batch-size", "2",
                        "--until-step", "4"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "tokens" in p.stdout, p.stderr


def test_stream_trace_agrees_with_the_stream_loader(tmp_path, stoker_cli):
    from test_provenance import write_jsonl

    paths = [str(write_jsonl(tmp_path / f"part-{k}.jsonl", n, f"p{k}"))
             for k, n in enumerate([150, 40, 90])]
    stream = stoker.Stream(paths, tokenizer="bytes", shuffle_buffer=64)
    seen = {}
    for rank in (0, 1):
        ld = stoker.Loader(stream, seq_len=64, batch_size=4, num_workers=1, pack="bestfit",
                           seed=3, rank=rank, world_size=2, output="numpy", pin_memory=False,
                           provenance=True)
        for step, batch in zip(range(6), ld):
            seen[(step, rank)] = [
                [(p["source"], p["shard"], p["record"], p["byte_offset"] is not None,
                  p["offset"], p["length"], p["row_offset"]) for p in row]
                for row in batch["provenance"]]
        # The stream's own record (test_stream_lineage.py replays it): its inputs, not datasets.
        assert ld.state_dict(run_record=True)["run_record"]["segments"][0]["stream"]["inputs"] \
            == paths
        ld.close()
    out = tmp_path / "stream.parquet"
    p = subprocess.run([stoker_cli, "trace", *paths, "--stream", "--tokenizer", "bytes",
                        "--shuffle-buffer", "64", "--seq-len", "64", "--batch-size", "4",
                        "--pack", "bestfit", "--seed", "3", "--world-size", "2", "--steps",
                        "0..5", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = defaultdict(lambda: defaultdict(list))
    for r in pq.read_table(out).to_pylist():
        got[(r["step"], r["rank"])][r["row"]].append(
            (r["dataset"], r["shard"], r["record"], True, r["offset"], r["length"],
             r["row_offset"]))
    assert sorted(got) == sorted(seen)
    for key, want in seen.items():
        assert [got[key][k] for k in sorted(got[key])] == want, key
    # --document on the stream flags: every piece of the first document served, in those steps.
    doc = seen[(0, 0)][0][0][:3]
    p = subprocess.run([stoker_cli, "trace", *paths, "--stream", "--tokenizer", "bytes",
                        "--shuffle-buffer", "64", "--seq-len", "64", "--batch-size", "4",
                        "--pack", "bestfit", "--seed", "3", "--world-size", "2", "--steps",
                        "0..5", "--document", f"{doc[0]}:{doc[1]}:{doc[2]}", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    hits = sorted((h["step"], h["rank"], h["row"], h["offset"]) for h in json.loads(p.stdout))
    assert hits == sorted((step, rank, r, piece[4]) for (step, rank), rows in seen.items()
                          for r, row in enumerate(rows) for piece in row
                          if piece[:3] == doc)
    assert hits
    p = subprocess.run([stoker_cli, "trace", *paths, "--stream", "--seq-len", "64",
                        "--batch-size", "4", "--mixture", paths[0], "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "--stream" in p.stderr


def test_trace_without_the_arrow_module_refuses_parquet_and_still_finds_documents(
        tmp_path, stoker_cli):
    import os

    a = pack(tmp_path, "a", 60)
    env = dict(os.environ, STOKER_ARROW_MODULE=str(tmp_path / "none" / "libstoker_arrow.so"))
    base = [stoker_cli, "trace", str(a), "--seq-len", "64", "--batch-size", "2", "--steps", "0..3"]
    p = subprocess.run(base + ["-o", str(tmp_path / "t.parquet")], capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 2 and "writes Parquet through Arrow" in p.stderr
    assert "cannot load the Parquet/Arrow module" in p.stderr and "--document" in p.stderr
    assert not (tmp_path / "t.parquet").exists()
    # The whole first epoch: every record of shard 0 is in it.
    p = subprocess.run(base[:-2] + ["--document", "a:0:0", "--json"], capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 0 and json.loads(p.stdout), p.stderr


def test_trace_follows_a_skip_edit_and_reads_an_adapters_file(tmp_path, stoker_cli):
    """A resume past skipped steps (stoker.edit_state) starts a new segment of the record where the
    skip lands: the trace names the rows the loader served after the skip, not the skipped ones.
    An adapter's own file ({"states": [...]}, as the Trainer's stoker_state.json) is read too."""
    a = str(pack(tmp_path, "a", 300))
    first = loader([(1.0, a)], world_size=1)
    seen = served(first, 2, 2)
    edited = stoker.edit_state(first.state_dict(run_record=True), skip_steps=(4, 6))
    second = loader([(1.0, a)], world_size=1)
    second.load_state_dict(edited)
    seen += served(second, 4, 2)  # run steps 2, 3, then plan steps 7, 8 as run steps 4, 5
    rec = second.run_record()
    assert [s["step"] for s in rec["segments"]] == [0, 2, 4] and rec["step"] == 6
    state_file = tmp_path / "stoker_state.json"
    state_file.write_text(json.dumps({"format": "some-adapter", "states": [
        second.state_dict(run_record=True)]}))
    out = tmp_path / "skip.parquet"
    p = subprocess.run([stoker_cli, "trace", "--run", str(state_file), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    by_step, _ = traced(out, {a: a})
    assert sorted(by_step) == list(range(6))
    for step, want in enumerate(seen):
        got = [[{k: v for k, v in piece.items() if k != "phase"} for piece in row]
               for row in by_step[step]]
        assert got == [[{k: v for k, v in piece.items() if k != "phase"} for piece in row]
                       for row in want], f"step {step}"
    # The skipped plan steps 4..6 are in no step of the trace.
    plain = loader([(1.0, a)], world_size=1)
    skipped = served(plain, 7, 2)[4:7]
    def key(piece):
        return json.dumps({k: v for k, v in piece.items() if k != "phase"}, sort_keys=True)

    traced_pieces = {key(p) for s in by_step.values() for row in s for p in row}
    skipped_pieces = {key(p) for step in skipped for row in step for p in row}
    assert skipped_pieces and not skipped_pieces & traced_pieces
