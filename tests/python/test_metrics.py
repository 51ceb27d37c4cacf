"""stoker.metrics (docs/metrics.md): the per-source figures a sink receives equal the counts
recomputed from provenance and from the batch's own labels over the same steps, across a phase
change and a mixture edit; each ready sink is read back with its own library's reader
(TensorBoard's EventAccumulator, a Prometheus scrape on loopback, W&B's offline run file)."""

import glob
import json
import struct
import subprocess
import sys
import urllib.request
from collections import defaultdict

import numpy as np
import pytest

import stoker
from test_mixture_schedule import BATCH, SEQ, mix  # noqa: F401
from test_py_data import datasets  # noqa: F401

NAMES = ["web", "code", "math"]  # the mix fixture's datasets, in file order


class Kept(dict):
    """A batch's labels and provenance, copied out of the ring, with its figures."""


def take(loader, steps):
    out = []
    for _, b in zip(range(steps), loader):
        k = Kept(labels=np.array(b["labels"]), provenance=b["provenance"])
        k.step, k.real_tokens, k.trained_tokens = b.step, b.real_tokens, b.trained_tokens
        out.append(k)
    return out


class Recorder:
    def __init__(self):
        self.windows = []

    def __call__(self, step, metrics):
        self.windows.append((step, metrics))


def expected_windows(batches, names, every, seq_len=SEQ):
    """The windows a sink should get, recomputed from each batch's provenance and labels."""
    out, window = [], []
    for b in batches:
        window.append(b)
        if len(window) == every:
            out.append(expected_window(window, names, seq_len))
            window = []
    return out, window


def expected_window(window, names, seq_len):
    got = defaultdict(int)
    real = trained_all = 0
    for b in window:
        labels = np.asarray(b["labels"])
        for r, row in enumerate(b["provenance"]):
            for p in row:
                name = names[p["dataset"]]
                got[f"stoker/tokens/{name}"] += p["length"]
                got[f"stoker/pieces/{name}"] += 1
                got[f"stoker/documents/{name}"] += p["offset"] == 0
                span = labels[r, p["row_offset"]:p["row_offset"] + p["length"]]
                got[f"stoker/trained_tokens/{name}"] += int((span != -100).sum())
                if b is window[-1]:  # each source's epoch at the window's last step
                    key = f"stoker/dataset_epoch/{name}"
                    got[key] = max(got.get(key, 0), p["dataset_epoch"])
                real += p["length"]
        trained_all += int((labels != -100).sum())
    assert real == sum(b.real_tokens for b in window)
    assert trained_all == sum(b.trained_tokens for b in window)
    got["stoker/tokens"] = real
    got["stoker/trained_tokens"] = trained_all
    got["stoker/padding_tokens"] = len(window) * BATCH * seq_len - real
    got["stoker/steps"] = len(window)
    return window[-1].step, dict(got)


def assert_windows_match(windows, expected, names):
    assert len(windows) == len(expected)
    for (step, got), (want_step, want) in zip(windows, expected):
        assert step == want_step
        for name in names:
            for kind in ("tokens", "trained_tokens", "documents", "pieces"):
                key = f"stoker/{kind}/{name}"
                assert got[key] == want.get(key, 0), (step, key)
            key = f"stoker/dataset_epoch/{name}"
            assert got.get(key) == want.get(key), (step, key)
        for key in ("stoker/tokens", "stoker/trained_tokens", "stoker/padding_tokens",
                    "stoker/steps"):
            assert got[key] == want[key], (step, key)
        assert got["stoker/data_wait_ms_p99"] >= got["stoker/data_wait_ms_p50"] >= 0
        assert got["stoker/storage_retries"] == 0


def test_the_sink_gets_the_exact_per_source_counts_across_a_phase_change_and_an_edit(
        mix, datasets, tmp_path):  # noqa: F811
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=5, pack="bestfit", provenance=True,
              output="numpy", metrics_every=4)
    rec = Recorder()
    # 100 steps: phase 0 ends at 40% of the run (step 40), phase 1 at step 60.
    loader = stoker.Loader(stoker.Mixture(mix["path"]), total_steps=100, metrics=rec, **kw)
    batches = take(loader, 48)
    expected, rest = expected_windows(batches, NAMES, 4)
    assert not rest
    assert_windows_match(rec.windows, expected, NAMES)
    phases = [w["stoker/phase"] for _, w in rec.windows]
    assert phases[0] == 0 and phases[-1] == 1  # the schedule moved on inside the run
    # Phase 0 serves no math, phase 1 does: the counts follow the schedule.
    assert rec.windows[0][1]["stoker/tokens/math"] == 0
    assert rec.windows[-1][1]["stoker/tokens/math"] > 0
    state = loader.state_dict()
    loader.close()

    # The edit: code removed, math reweighted; the sink names the edited mixture's datasets.
    edited = tmp_path / "edited.json"
    spec = json.loads(open(mix["path"]).read())
    root = mix["root"]
    edited.write_text(json.dumps({"datasets": {"math": str(mix["c"]),
                                               "web": str(root / spec["datasets"]["web"])},
                                  "weights": {"math": 1, "web": 3}}))
    rec2 = Recorder()
    after = stoker.Loader(stoker.Mixture(edited), metrics=rec2, **kw)
    after.load_state_dict(state)
    batches = take(after, 10)
    after.close()  # flushes the last, partial window
    expected, rest = expected_windows(batches, ["math", "web"], 4)
    expected.append(expected_window(rest, ["math", "web"], SEQ))
    assert_windows_match(rec2.windows, expected, ["math", "web"])
    assert "stoker/tokens/code" not in rec2.windows[0][1]
    assert rec2.windows[0][1]["stoker/tokens/web"] > 0


def test_metrics_on_do_not_change_the_batches(datasets):  # noqa: F811
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=2, output="numpy")
    plain = [{k: np.array(v) for k, v in b.items()}
             for _, b in zip(range(12), stoker.Loader([datasets["a"], datasets["b"]], **kw))]
    rec = Recorder()
    loader = stoker.Loader([datasets["a"], datasets["b"]], metrics=rec, metrics_every=5, **kw)
    counted = [{k: np.array(v) for k, v in b.items()} for _, b in zip(range(12), loader)]
    for x, y in zip(plain, counted):
        assert all(np.array_equal(x[k], y[k]) for k in x)
    loader.close()
    assert [w["stoker/steps"] for _, w in rec.windows] == [5, 5, 2]
    names = {k.split("/")[2] for _, w in rec.windows for k in w if k.count("/") == 2}
    assert len(names) == 2  # one name per dataset, from the paths


def test_bad_metrics_arguments_are_refused(datasets):  # noqa: F811
    with pytest.raises(ValueError, match="metrics_every must be a positive integer"):
        stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, metrics=Recorder(),
                      metrics_every=0)
    with pytest.raises(TypeError, match="metrics must be a stoker.metrics sink"):
        stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, metrics=42)


def test_metrics_need_datasets(tmp_path):
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"text": "hello"}\n')
    stream = stoker.Stream([str(jsonl)], tokenizer="bytes")
    with pytest.raises(ValueError, match="metrics= needs datasets"):
        stoker.Loader(stream, seq_len=SEQ, batch_size=1, metrics=lambda s, m: None)


def test_importing_stoker_imports_no_sink_library():
    code = ("import sys, stoker, stoker.metrics\n"
            "bad = [m for m in ('tensorboard', 'wandb', 'prometheus_client') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def run_with(sink, datasets, steps=9, every=3):  # noqa: F811
    rec = Recorder()
    loader = stoker.Loader([datasets["a"], datasets["b"]], seq_len=SEQ, batch_size=BATCH,
                           seed=1, output="numpy", metrics=[rec, sink], metrics_every=every)
    for _, _b in zip(range(steps), loader):
        pass
    return loader, rec


def test_tensorboard_event_files_read_back(datasets, tmp_path):  # noqa: F811
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    loader, rec = run_with(stoker.metrics.TensorBoard(tmp_path / "tb"), datasets)
    loader.close()
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert set(tags) == set(rec.windows[0][1])
    for tag in tags:
        events = acc.Scalars(tag)
        assert [e.step for e in events] == [s for s, _ in rec.windows]
        want = [np.float32(w[tag]) for _, w in rec.windows]
        assert [np.float32(e.value) for e in events] == want, tag


def test_prometheus_endpoint_is_scraped_on_loopback(datasets):  # noqa: F811
    from prometheus_client.parser import text_string_to_metric_families

    sink = stoker.metrics.Prometheus(port=0)
    loader, rec = run_with(sink, datasets)
    body = urllib.request.urlopen(f"http://127.0.0.1:{sink.port}/metrics", timeout=10).read()
    samples = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            samples[(s.name, s.labels.get("source"))] = s.value
    step, last = rec.windows[-1]
    assert samples[("stoker_step", None)] == step
    for key, value in last.items():
        parts = key.split("/")
        if len(parts) == 3:
            name, source = f"stoker_source_{parts[1]}", parts[2]
        else:
            name, source = "_".join(parts), None
        assert samples[(name, source)] == pytest.approx(value), key
    loader.close()


def wandb_history(path):
    """The history rows of a W&B run file (its records: a LevelDB-style log of wandb's own
    Record protos, 32 KiB blocks after a 7-byte header)."""
    from wandb.proto import wandb_internal_pb2

    data = open(path, "rb").read()
    assert data[:4] == b":W&B"
    pos, buf, rows = 7, b"", []
    while pos + 7 <= len(data):
        if 32768 - pos % 32768 < 7:
            pos += 32768 - pos % 32768
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            break
        buf += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or a record's last fragment
            rec = wandb_internal_pb2.Record()
            rec.ParseFromString(buf)
            buf = b""
            if rec.WhichOneof("record_type") == "history":
                rows.append({(i.key or "/".join(i.nested_key)): json.loads(i.value_json)
                             for i in rec.history.item})
    return rows


def test_wandb_offline_run_files_read_back(datasets, tmp_path, monkeypatch):  # noqa: F811
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    sink = stoker.metrics.WandB(mode="offline", dir=str(tmp_path), project="stoker-test")
    loader, rec = run_with(sink, datasets)
    loader.close()  # finishes the run
    assert wandb.run is None
    wandb.teardown()  # stops wandb's service process: the run file is complete on disk
    files = glob.glob(str(tmp_path / "wandb" / "offline-run-*" / "run-*.wandb"))
    assert len(files) == 1
    rows = wandb_history(files[0])
    assert [r["_step"] for r in rows] == [s for s, _ in rec.windows]
    for row, (_, want) in zip(rows, rec.windows):
        assert {k: row[k] for k in want} == pytest.approx(want)
