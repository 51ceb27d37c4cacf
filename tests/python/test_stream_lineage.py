"""The run record of a stoker.Stream (docs/lineage.md, "Streams"): a stream loader's checkpoint
carries a record naming its inputs and options, and `stoker trace --run`, `trace --run --document`
and `stoker summary --run` replay every rank's stream from it. Each is checked against what the
loaders themselves reported for the batches they served (provenance=True), on two ranks, across an
epoch boundary and a resume, for plain text and for chat records."""

import json
import subprocess
from collections import Counter, defaultdict

import pyarrow.parquet as pq
import pytest

import stoker
from test_provenance import write_jsonl

KEYS = ("source", "shard", "record", "offset", "length", "row_offset")
KW = dict(seq_len=64, batch_size=3, num_workers=1, pack="bestfit", seed=5, output="numpy",
          pin_memory=False, provenance=True)


def inputs(tmp_path):
    return [str(write_jsonl(tmp_path / f"part-{k}.jsonl", n, f"p{k}"))
            for k, n in enumerate([120, 30, 70])]


def serve(loader, steps, rank, seen, first_step=0):
    """Runs `steps` batches of `loader` (over epoch ends), recording each piece by (step, rank)."""
    step = first_step
    while step < first_step + steps:
        for batch in loader:
            seen[(step, rank)] = [[tuple(p[k] for k in KEYS) for p in row]
                                  for row in batch["provenance"]]
            step += 1
            if step == first_step + steps:
                break
    return seen


def trace(stoker_cli, state, out, *extra):
    p = subprocess.run([stoker_cli, "trace", "--run", str(state), "-o", str(out), *extra],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    got = defaultdict(lambda: defaultdict(list))
    for r in pq.read_table(out).to_pylist():
        got[(r["step"], r["rank"])][r["row"]].append(
            (r["dataset"], r["shard"], r["record"], r["offset"], r["length"], r["row_offset"]))
    return {k: [rows[i] for i in sorted(rows)] for k, rows in got.items()}, p.stderr


def without_empty_rows(seen):
    return {k: [row for row in rows if row] for k, rows in seen.items()}


def save(path, state):
    path.write_text(json.dumps(state))
    return path


def test_trace_and_summary_of_a_stream_run_record_equal_the_loaders_provenance(
        tmp_path, stoker_cli):
    paths = inputs(tmp_path)
    stream = stoker.Stream(paths, tokenizer="bytes", shuffle_buffer=32, steps_per_epoch=4)
    seen, records = {}, []
    for rank in (0, 1):
        ld = stoker.Loader(stream, rank=rank, world_size=2, **KW)
        serve(ld, 6, rank, seen)  # 4 steps of epoch 0, 2 of epoch 1
        records.append(ld.state_dict(run_record=True)["run_record"])
        ld.close()
    record = records[0]
    assert record == records[1]  # the run's, not a rank's
    assert record["format"] == "stoker-run-record" and record["step"] == 6
    (segment,) = record["segments"]
    assert segment["stream"]["inputs"] == paths and segment["options"]["world_size"] == 2
    state = save(tmp_path / "record.json", record)  # a record file, as run_record() gives it

    got, err = trace(stoker_cli, state, tmp_path / "all.parquet")
    assert "replaying the stream" in err
    assert got == without_empty_rows(seen)
    assert {s for s, _ in got} == set(range(6))
    got, _ = trace(stoker_cli, state, tmp_path / "some.parquet", "--steps", "3..4")
    assert got == {k: v for k, v in without_empty_rows(seen).items() if k[0] in (3, 4)}

    # document -> steps: every piece of a document, and only those (a split one has several).
    where = defaultdict(list)
    for (step, rank), rows in seen.items():
        for r, row in enumerate(rows):
            for p in row:
                where[(p[0], p[1], p[2])].append(
                    {"step": step, "rank": rank, "row": r, "offset": p[3], "length": p[4]})
    split = [d for d, hits in where.items() if len(hits) > 1]
    for doc in ([split[0]] if split else []) + list(where)[:3]:
        name = f"{doc[0].rsplit('/', 1)[-1]}:{doc[1]}:{doc[2]}"  # the file's name, as for datasets
        p = subprocess.run([stoker_cli, "trace", "--run", str(state), "--document", name,
                            "--json", "-q"], capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        hits = [{k: h[k] for k in ("step", "rank", "row", "offset", "length")}
                for h in json.loads(p.stdout)]
        key = lambda h: (h["step"], h["rank"], h["row"], h["offset"])  # noqa: E731
        assert sorted(hits, key=key) == sorted(where[doc], key=key), name
    # Inputs changed since the run: refused, naming them, rather than a trace of other data.
    changed = tmp_path / "changed"
    changed.mkdir()
    moved = [str(write_jsonl(changed / f"part-{k}.jsonl", n, f"p{k}"))
             for k, n in enumerate([120, 31, 70])]
    other = json.loads(json.dumps(record))
    other["segments"][0]["stream"]["inputs"] = moved
    p = subprocess.run([stoker_cli, "trace", "--run", str(save(tmp_path / "other.json", other)),
                        "-o", str(tmp_path / "other.parquet")], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode != 0 and "fingerprint" in p.stderr and moved[1] in p.stderr, p.stderr
    p = subprocess.run([stoker_cli, "trace", "--run", str(state), "--document", "nope.jsonl:0:1"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "nope.jsonl" in p.stderr and "part-0.jsonl" in p.stderr

    # summary: tokens, documents started and pieces per input equal the provenance's.
    p = subprocess.run([stoker_cli, "summary", "--run", str(state), "--json", "-q"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    tokens, starts, pieces = Counter(), Counter(), Counter()
    for rows in seen.values():
        for row in rows:
            for src, _shard, _rec, offset, length, _at in row:
                tokens[src] += length
                starts[src] += offset == 0
                pieces[src] += 1
    assert {s["name"]: s["tokens"] for s in j["sources"]} == dict(tokens)
    assert {s["name"]: s["documents"] for s in j["sources"]} == dict(starts)
    assert {s["name"]: s["pieces"] for s in j["sources"]} == dict(pieces)
    assert j["steps"] == 6 and j["rows"] == 6 * 2 * 3
    assert j["padding_tokens"] == 6 * 2 * 3 * 64 - sum(tokens.values())


def test_a_resumed_stream_record_traces_on_across_the_same_and_another_world_size(
        tmp_path, stoker_cli):
    paths = inputs(tmp_path)
    stream = lambda: stoker.Stream(paths, tokenizer="bytes", shuffle_buffer=32)  # noqa: E731
    seen, states = {}, []
    for rank in (0, 1):
        ld = stoker.Loader(stream(), rank=rank, world_size=2, **KW)
        serve(ld, 3, rank, seen)
        states.append(json.loads(json.dumps(ld.state_dict(run_record=True))))
        ld.close()
    # Resume on the same world size: the record goes on, and trace replays it whole.
    for rank in (0, 1):
        ld = stoker.Loader(stream(), rank=rank, world_size=2, **KW)
        ld.load_state_dict(states)
        serve(ld, 2, rank, seen, first_step=3)
        if rank == 0:
            after = ld.state_dict(run_record=True)
        ld.close()
    record = after["run_record"]
    assert record["step"] == 5 and [s["step"] for s in record["segments"]] == [0, 3]
    assert record["segments"][1]["resume"]["rows_consumed"] == 3 * 2 * 3
    got, _ = trace(stoker_cli, save(tmp_path / "resumed.json", after), tmp_path / "r.parquet")
    assert got == without_empty_rows(seen)
    # What a trainer adapter saves for a stream (every rank's state; the record once, in the
    # first) traces the same.
    from stoker.integrations._common import global_states

    ld = stoker.Loader(stream(), rank=0, world_size=2, **KW)
    ld.load_state_dict(states)
    serve(ld, 2, 0, {}, first_step=3)
    saved = global_states(ld)
    ld.close()
    assert saved[0]["run_record"] == record
    got, _ = trace(stoker_cli, save(tmp_path / "adapter.json", {"states": saved}),
                   tmp_path / "a.parquet")
    assert got == without_empty_rows(seen)

    # On three ranks (elastic): each new rank takes its share of the old ranks' unread documents.
    # trace replays the old world to the resume, deals its states as load_state_dict did, and
    # goes on with the new ranks, into the next epoch (the new world's own): equal to what the
    # three loaders served.
    after_elastic, stepped = {}, 0
    for rank in (0, 1, 2):
        ld = stoker.Loader(stream(), rank=rank, world_size=3, **KW)
        ld.load_state_dict(states)
        if rank == 0:
            stepped = ld.steps_remaining() + 2  # the rest of the epoch and two of the next
        serve(ld, stepped, rank, after_elastic, first_step=3)
        if rank == 0:
            elastic = save(tmp_path / "elastic.json", ld.state_dict(run_record=True))
        ld.close()
    record = json.loads(elastic.read_text())["run_record"]
    assert [s["step"] for s in record["segments"]] == [0, 3]
    assert record["segments"][1]["resume"]["elastic"]
    assert record["segments"][1]["options"]["world_size"] == 3
    expected = without_empty_rows({k: v for k, v in seen.items() if k[0] < 3} | after_elastic)
    got, _ = trace(stoker_cli, elastic, tmp_path / "e.parquet")
    assert got == expected
    assert {r for s, r in got if s >= 3} == {0, 1, 2}
    got, _ = trace(stoker_cli, elastic, tmp_path / "e2.parquet", "--steps", "4..5")
    assert got == {k: v for k, v in expected.items() if k[0] in (4, 5)}
    p = subprocess.run([stoker_cli, "summary", "--run", str(elastic), "--json", "-q"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    tokens = Counter()
    for rows in expected.values():
        for row in rows:
            for src, _shard, _rec, _offset, length, _at in row:
                tokens[src] += length
    assert {s["name"]: s["tokens"] for s in json.loads(p.stdout)["sources"]} == dict(tokens)
    # A record that starts at the elastic resume (a checkpoint without a record was resumed) has
    # no old world to deal from: its steps are refused, saying why.
    cut = json.loads(elastic.read_text())
    cut["run_record"]["segments"] = cut["run_record"]["segments"][1:]
    p = subprocess.run([stoker_cli, "trace", "--run", str(save(tmp_path / "cut.json", cut)),
                        "--steps", "3..4", "-o", str(tmp_path / "cut.parquet")],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode != 0 and "another world size" in p.stderr, p.stderr


def test_trace_of_a_chat_stream_record_equals_its_provenance(tmp_path, stoker_cli):
    from chat_testlib import make_qwen_models, records, write_jsonl as write_rows

    model = make_qwen_models(tmp_path / "models")["qwen2_5"]
    chats = write_rows(tmp_path / "chats.jsonl", records() * 6)
    stream = stoker.Stream([chats], tokenizer=str(model), shuffle_buffer=8)
    ld = stoker.Loader(stream, **(KW | {"seq_len": 160, "batch_size": 2}))
    seen = serve(ld, 4, 0, {})
    state = save(tmp_path / "chat.json", ld.state_dict(run_record=True))
    ld.close()
    got, _ = trace(stoker_cli, state, tmp_path / "chat.parquet")
    assert got == without_empty_rows(seen) and len(got) == 4
    p = subprocess.run([stoker_cli, "summary", "--run", str(state), "--json", "-q"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["tokens"] == sum(
        piece[4] for rows in seen.values() for row in rows for piece in row)


@pytest.mark.parametrize("bad", ["segments", "inputs", "resume"])
def test_a_malformed_stream_record_is_refused_naming_the_segment(tmp_path, stoker_cli, bad):
    paths = inputs(tmp_path)
    ld = stoker.Loader(stoker.Stream(paths, tokenizer="bytes"), **KW)
    serve(ld, 1, 0, {})
    record = ld.run_record()
    ld.close()
    seg = record["segments"][0]
    if bad == "segments":
        record["segments"].append(dict(seg, step=0, resume=None) | {"step": 0})
        record["segments"][0] = dict(seg, step=1)
    elif bad == "inputs":
        seg["stream"]["inputs"] = []
    else:
        seg["resume"] = {"epoch": 0, "rows_consumed": 1}
    path = save(tmp_path / "bad.json", record)
    p = subprocess.run([stoker_cli, "trace", "--run", str(path), "-o", str(tmp_path / "x.parquet")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "segment" in p.stderr, p.stderr
