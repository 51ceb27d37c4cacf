"""Bad input from Python: FileNotFoundError, ValueError, OSError (and friends) carrying the C++
message that names the file; never a crash."""

import json
import os
import shutil

import numpy as np
import pytest

import stoker
from stoker import _stoker
from test_py_data import datasets, write_jsonl  # noqa: F401


@pytest.mark.parametrize("code,exc", [
    ("invalid_argument", ValueError), ("not_found", FileNotFoundError),
    ("already_exists", FileExistsError), ("corruption", OSError), ("io_error", OSError),
    ("unavailable", OSError), ("cancelled", RuntimeError), ("out_of_range", IndexError),
    ("failed_precondition", ValueError), ("unimplemented", NotImplementedError),
    ("internal", RuntimeError)])
def test_every_status_code_maps_to_one_exception(code, exc):
    names = _stoker.status_code_names()
    with pytest.raises(exc, match="^the message$") as info:
        _stoker._raise_status(names.index(code), "the message")
    assert type(info.value) is exc


def test_missing_dataset_is_file_not_found(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match=str(missing)):
        stoker.Loader(str(missing), seq_len=16, batch_size=1)
    with pytest.raises(FileNotFoundError, match=str(missing)):
        stoker.inspect(missing)
    with pytest.raises(FileNotFoundError):
        stoker.plan(missing, 16, 1)
    with pytest.raises(FileNotFoundError):
        stoker.verify(missing)


@pytest.mark.parametrize("kw,match", [
    (dict(seq_len=0), "seq_len"),
    (dict(batch_size=-1), "batch_size"),
    (dict(shuffle="random"), "random"),
    (dict(pack="tight"), "tight"),
    (dict(rank=2, world_size=2), "rank"),
    (dict(world_size=0), "world_size"),
    (dict(device="tpu"), "device"),
    (dict(output="jax"), "output"),
    (dict(token_dtype="float32"), "token_dtype"),
    (dict(on_error="ignore"), "on_error"),
    (dict(num_workers=-3), "num_workers"),
    (dict(seed=-1), "seed"),
    (dict(seq_len=4096, batch_size=64), "no full batch"),
])
def test_bad_options_are_value_errors(datasets, kw, match):
    args = dict(seq_len=16, batch_size=2)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        stoker.Loader(datasets["a"], **args)


@pytest.mark.parametrize("spec", [[(0.0, "x")], [(-1, "x")], [("x", 0.5)], [], [3]])
def test_bad_dataset_specs_are_value_errors(spec):
    with pytest.raises(ValueError):
        stoker.Loader(spec, seq_len=16, batch_size=1)


def test_mismatched_or_malformed_state_is_value_error(datasets):
    a = stoker.Loader(datasets["a"], seq_len=16, batch_size=2)
    b = stoker.Loader(datasets["b"], seq_len=16, batch_size=2)
    next(iter(b))
    with pytest.raises(ValueError, match="fingerprint.*the dataset differs"):
        a.load_state_dict(b.state_dict())
    # A one-dataset checkpoint names the option that differs, with both values.
    other_seed = stoker.Loader(datasets["a"], seq_len=16, batch_size=2, seed=1)
    with pytest.raises(ValueError, match=r"seed \(1 in the checkpoint, 0 here\) differ"):
        a.load_state_dict(other_seed.state_dict())
    longer = stoker.Loader(datasets["a"], seq_len=32, batch_size=2)
    with pytest.raises(ValueError, match=r"seq_len \(32 in the checkpoint, 16 here\) differ"):
        a.load_state_dict(longer.state_dict())
    good = a.state_dict()
    for bad in ({}, {"format": "x"}, dict(good, version=99), dict(good, plan_state=None),
                dict(good, plan_state=dict(good["plan_state"], version=7)),
                dict(good, plan_state=dict(good["plan_state"], rows_consumed=-5)),
                dict(good, plan_state=dict(good["plan_state"], rows_consumed=10**9))):
        with pytest.raises(ValueError):
            a.load_state_dict(json.loads(json.dumps(bad)))
    # After the refusals the loader still works from where it was.
    assert next(iter(a))["input_ids"].shape == (2, 16)


def test_corrupt_data_is_os_error_naming_the_file(tmp_path):
    bad_npy = tmp_path / "bad.npy"
    bad_npy.write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': 'zz'}   \n" + b"\0" * 64)
    with pytest.raises(OSError, match="bad.npy") as info:
        stoker.Loader(str(bad_npy), seq_len=16, batch_size=1)
    assert not isinstance(info.value, FileNotFoundError)
    with pytest.raises(OSError, match="bad.npy"):
        stoker.inspect(bad_npy)


def test_truncated_shard_is_os_error(datasets, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(datasets["a"], copy)
    bins = sorted(p for p in copy.iterdir() if p.suffix == ".bin")
    with open(bins[0], "r+b") as f:
        f.truncate(os.path.getsize(bins[0]) // 2)
    with pytest.raises(OSError, match=bins[0].name):
        stoker.Loader(str(copy), seq_len=16, batch_size=1)
    report = stoker.verify(copy)
    assert not report["ok"] and any(bins[0].name in p for p in report["problems"])


def test_pack_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        stoker.pack([tmp_path / "missing.jsonl"], tmp_path / "out")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\nnot json\n')
    with pytest.raises(ValueError, match="bad.jsonl"):
        stoker.pack([bad], tmp_path / "out")
    good = tmp_path / "good.jsonl"
    write_jsonl(good, 5, seed=1, alphabet="ab")
    stoker.pack([good], tmp_path / "out")
    with pytest.raises(FileExistsError):
        stoker.pack([good], tmp_path / "out")
    stoker.pack([good], tmp_path / "out", overwrite=True)
    with pytest.raises(ValueError, match="size"):
        stoker.pack([good], tmp_path / "out2", shard_size="huge")
    with pytest.raises(ValueError):
        stoker.pack([good], tmp_path / "out3", utf8="maybe")
    with pytest.raises(ValueError):
        stoker.pack([good], tmp_path / "out4", task_index=0)


def test_inspect_document_out_of_range_is_index_error(datasets):
    n = stoker.inspect(datasets["b"])["documents"]
    with pytest.raises(IndexError):
        stoker.inspect(datasets["b"], document=n)


def test_plan_step_out_of_range_is_index_error(datasets):
    plan = stoker.plan(datasets["a"], 16, 2)
    with pytest.raises(IndexError):
        plan.batch(0, plan.steps_per_epoch(0))


def test_holding_every_slot_is_a_clear_value_error(datasets):
    loader = stoker.Loader(datasets["a"], seq_len=16, batch_size=2, num_workers=1,
                           prefetch_factor=1)
    it = iter(loader)
    held = [next(it), next(it)]
    with pytest.raises(ValueError, match="clone"):
        next(it)
    assert len(held) == 2
