"""stoker.Loader from Python: batches equal the plan's (and the CLI's), epochs, len, set_epoch,
state_dict round trips (also elastic), mixtures, NumPy output, the synthetic loader and the torch
IterableDataset adapter."""

import json
import time

import numpy as np
import pytest
import torch

import stoker
from test_py_data import assert_batch_equal, cli_plan, datasets, reference_batch  # noqa: F401

SEQ, BATCH = 64, 4


def tokens(batch):
    return batch["input_ids"].numpy().copy()


def run_epoch(loader):
    return [tokens(b) for b in loader]


def materialize(loader):
    """One epoch as copies (the loader's own tensors must be let go to free ring slots)."""
    return [{k: v.clone() if isinstance(v, torch.Tensor) else v.copy() for k, v in b.items()}
            for b in loader]


def test_batches_equal_the_cli_plan(datasets, stoker_cli):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, num_workers=2,
                           pack="bestfit", seed=7)
    ref = cli_plan(stoker_cli, [datasets["a"], "--seq-len", SEQ, "--batch-size", BATCH,
                                "--pack", "bestfit", "--seed", 7])
    got = materialize(loader)
    assert len(got) == len(ref) == len(loader) > 5
    for batch, plan_batch in zip(got, ref):
        assert isinstance(batch["input_ids"], torch.Tensor)
        assert batch["input_ids"].dtype == torch.int64 and batch["cu_seqlens"].dtype == torch.int32
        assert_batch_equal(batch, reference_batch(plan_batch, [datasets["docs_a"]], SEQ))


@pytest.mark.parametrize("pack", ["concat", "pad"])
def test_batches_equal_stoker_plan(datasets, pack):
    kw = dict(seq_len=SEQ, batch_size=BATCH, pack=pack, seed=3, world_size=2, rank=1)
    loader = stoker.Loader(datasets["a"], num_workers=3, **kw)
    plan = stoker.plan(datasets["a"], **kw)
    got = materialize(loader)
    assert len(got) == plan.steps_per_epoch(0)
    for batch, plan_batch in zip(got, plan.batches(0)):
        assert_batch_equal(batch, reference_batch(plan_batch, [datasets["docs_a"]], SEQ))


def test_position_and_segment_ids_can_be_left_out(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH, pack="bestfit", seed=5, num_workers=2)
    full = materialize(stoker.Loader(datasets["a"], **kw))
    lean = materialize(stoker.Loader(datasets["a"], position_ids=False, segment_ids=False, **kw))
    assert len(lean) == len(full) > 5
    for got, want in zip(lean, full):
        assert set(want) - set(got) == {"position_ids", "segment_ids"}
        for name in ("input_ids", "labels", "cu_seqlens"):
            assert torch.equal(got[name], want[name]), name
    with pytest.raises(ValueError, match="segment_ids"):
        stoker.Loader(datasets["a"], segment_ids=False, attention_mask=True, **kw)


def test_numpy_output_and_worker_count_do_not_change_the_data(datasets):
    def epoch(**kw):
        loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, **kw)
        return [{k: np.array(v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in b.items()}
                for b in loader]

    base = epoch(num_workers=1, output="torch")
    numpy_batches = epoch(num_workers=3, output="numpy", prefetch_factor=3)
    assert isinstance(stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH,
                                    output="numpy").__iter__().__next__()["labels"], np.ndarray)
    assert len(base) == len(numpy_batches)
    for x, y in zip(base, numpy_batches):
        assert x.keys() == y.keys()
        for k in x:
            np.testing.assert_array_equal(x[k], y[k])


def test_each_iteration_is_the_next_epoch_and_set_epoch_jumps(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=5)
    loader = stoker.Loader(datasets["a"], **kw)
    plan = stoker.plan(datasets["a"], **kw)
    e0, e1 = run_epoch(loader), run_epoch(loader)
    assert loader.epoch == 2
    assert not all(np.array_equal(x, y) for x, y in zip(e0, e1))  # reshuffled per epoch
    docs = [datasets["docs_a"]]
    for e, got in ((0, e0), (1, e1)):
        assert len(got) == plan.steps_per_epoch(e)
        for g, pb in zip(got, plan.batches(e)):
            np.testing.assert_array_equal(g, reference_batch(pb, docs, SEQ)["input_ids"])
    loader.set_epoch(0)
    again = run_epoch(loader)
    assert all(np.array_equal(x, y) for x, y in zip(e0, again))


def test_breaking_right_after_the_last_batch_still_gives_a_full_next_epoch(datasets):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH)
    steps = len(loader)
    for i, _ in zip(range(steps), loader):
        pass
    assert loader.epoch == 1
    assert len(run_epoch(loader)) == stoker.plan(datasets["a"], SEQ, BATCH).steps_per_epoch(1)


def test_set_epoch_keeps_a_mid_epoch_resume(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH)
    full = run_epoch(stoker.Loader(datasets["a"], **kw))
    first = stoker.Loader(datasets["a"], **kw)
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    resumed = stoker.Loader(datasets["a"], **kw)
    resumed.load_state_dict(state)
    resumed.set_epoch(0)  # torch habit: must not restart the epoch
    rest = run_epoch(resumed)
    assert len(rest) == len(full) - 3
    assert all(np.array_equal(x, y) for x, y in zip(full[3:], rest))


@pytest.mark.parametrize("stop_after", [1, 5, "epoch_end"])
def test_state_dict_round_trip_equals_uninterrupted(datasets, stop_after):
    kw = dict(seq_len=SEQ, batch_size=BATCH, pack="bestfit", seed=11, num_workers=2)
    ref = stoker.Loader(datasets["a"], **kw)
    uninterrupted = run_epoch(ref) + run_epoch(ref)
    first = stoker.Loader(datasets["a"], **kw)
    n = len(first) if stop_after == "epoch_end" else stop_after
    seen = [tokens(b) for _, b in zip(range(n), first)]
    ckpt = json.loads(json.dumps({"data": first.state_dict()}))  # survives JSON
    assert len(json.dumps(ckpt)) < 400  # a few integers and one line of options
    del first
    second = stoker.Loader(datasets["a"], **kw)
    second.load_state_dict(ckpt["data"])
    rest = [tokens(b) for b in second]
    if stop_after != "epoch_end":
        rest += run_epoch(second)
    got = seen + rest
    assert len(got) == len(uninterrupted)
    assert all(np.array_equal(x, y) for x, y in zip(got, uninterrupted))


def test_a_state_taken_after_a_break_resumes_after_the_last_batch_the_loop_saw(datasets):
    # What a state means (docs/python.md): the position after the last batch the loop was given.
    # In the common loop (train on the batch, then maybe break) that is the last batch trained.
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=3, num_workers=2)
    full = run_epoch(stoker.Loader(datasets["a"], **kw))
    first = stoker.Loader(datasets["a"], **kw)
    seen = []
    for batch in first:
        seen.append(tokens(batch))
        if len(seen) == 4:
            break
    state = first.state_dict()
    assert state["plan_state"]["rows_consumed"] == 4 * BATCH
    second = stoker.Loader(datasets["a"], **kw)
    second.load_state_dict(state)
    rest = [tokens(b) for b in second]
    assert len(seen) + len(rest) == len(full)
    assert all(np.array_equal(x, y) for x, y in zip(seen + rest, full))


def test_len_after_a_resume_is_the_whole_epoch_and_steps_remaining_the_rest(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=3)
    first = stoker.Loader(datasets["a"], **kw)
    whole = len(first)
    for _, _b in zip(range(3), first):
        pass
    resumed = stoker.Loader(datasets["a"], **kw)
    resumed.load_state_dict(first.state_dict())
    assert len(resumed) == whole
    assert resumed.steps_remaining() == whole - 3
    assert sum(1 for _ in resumed) == whole - 3
    assert resumed.steps_remaining() == len(resumed) == whole  # the next epoch, from its start


def rows_of(batches):
    return sorted(tuple(row) for b in batches for row in b.tolist())


def test_elastic_restore_on_another_world_size(datasets):
    kw = dict(seq_len=SEQ, pack="concat", seed=2, remainder="pad")
    whole = stoker.Loader(datasets["a"], batch_size=2 * BATCH, world_size=1, **kw)
    all_rows = rows_of(run_epoch(whole))
    ranks = [stoker.Loader(datasets["a"], batch_size=BATCH, world_size=2, rank=r, **kw)
             for r in range(2)]
    steps = 3
    before = [tokens(b) for r in ranks for _, b in zip(range(steps), r)]
    states = [r.state_dict() for r in ranks]
    assert states[0] == states[1]  # every rank writes the same checkpoint
    # Resume the two-rank run on one rank with the same global batch.
    single = stoker.Loader(datasets["a"], batch_size=2 * BATCH, world_size=1, **kw)
    single.load_state_dict(states[0])
    after = run_epoch(single)
    got = rows_of(before + after)
    padded = [r for r in got if r not in all_rows]
    assert not padded
    assert got == all_rows


def test_mixture_equals_the_cli_plan(datasets, stoker_cli):
    loader = stoker.Loader([(3, datasets["a"]), (1.0, datasets["b"])], seq_len=SEQ,
                           batch_size=BATCH, seed=9, pack="bestfit")
    ref = cli_plan(stoker_cli, [f"3:{datasets['a']}", f"1:{datasets['b']}", "--seq-len", SEQ,
                                "--batch-size", BATCH, "--seed", 9, "--pack", "bestfit"])
    got = materialize(loader)
    assert len(got) == len(ref)
    docs = [datasets["docs_a"], datasets["docs_b"]]
    used = set()
    for batch, pb in zip(got, ref):
        assert_batch_equal(batch, reference_batch(pb, docs, SEQ))
        used |= {piece[0] for row in pb["rows"] for piece in row}
    assert used == {0, 1}
    # Digits ('0'..'9') only come from dataset b, letters only from a.
    ids = torch.cat([b["input_ids"].flatten() for b in got])
    assert (ids == ord("5")).any() and (ids == ord("c")).any()


def test_synthetic_loader_serves_one_fixed_batch():
    loader = stoker.Loader.synthetic(seq_len=32, batch_size=2, seed=1, steps=4)
    got = materialize(loader)
    assert len(got) == len(loader) == 4
    assert all(torch.equal(got[0]["input_ids"], g["input_ids"]) for g in got)
    assert got[0]["input_ids"].shape == (2, 32)
    forever = stoker.Loader.synthetic(seq_len=32, batch_size=2, output="numpy")
    with pytest.raises(TypeError):
        len(forever)
    it = iter(forever)
    assert all(next(it)["labels"].shape == (2, 32) for _ in range(10))


def test_stats_count_delivered_batches(datasets):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, num_workers=2)
    n = len(run_epoch(loader))
    s = loader.stats()
    assert s["batches"] == n and s["tokens"] == n * SEQ * BATCH
    assert 0 < s["real_tokens"] <= s["tokens"] and s["num_workers"] == 2
    assert s["ring_slots"] >= 3 and s["wait_total_ms"] >= 0


def test_live_monitor_in_stats_and_silenced_warning(datasets, capfd):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, num_workers=1,
                           monitor_warnings=False)
    for _ in loader:
        time.sleep(0.002)  # a consumer step, so the monitor has steps to measure
    s = loader.stats()
    assert s["monitor_batches"] > 0
    assert s["monitor_consumed_tokens_per_s"] > 0 and s["monitor_ratio"] > 0
    assert "below" not in capfd.readouterr().err  # silenced: counted, never printed


def test_a_loop_that_trains_nothing_prints_no_stall_warning(tmp_path, capfd):
    # One worker assembling long rows: a bare loop waits on nearly every batch. That is not a data
    # stall in training (nothing is trained), so the monitor measures it but does not warn.
    path = tmp_path / "docs.npy"
    np.save(path, np.arange(3000 * 700, dtype=np.int32).reshape(3000, 700) % 50000)
    loader = stoker.Loader(str(path), seq_len=2048, batch_size=16, num_workers=1, seed=1)
    batches = 0
    for _ in range(3):
        for _ in loader:
            batches += 1
    s = loader.stats()
    assert batches > 150 and s["monitor_batches"] > 0
    assert s["monitor_warnings"] == 0
    assert "warning" not in capfd.readouterr().err


def test_torchrun_environment_sets_rank_and_world_size(datasets, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    by_env = run_epoch(stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH))
    explicit = run_epoch(stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, rank=1,
                                       world_size=2))
    assert all(np.array_equal(x, y) for x, y in zip(by_env, explicit))


def test_torch_iterable_dataset_adapter(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=4)
    direct = run_epoch(stoker.Loader(datasets["a"], **kw))
    ds = stoker.TorchIterableDataset(stoker.Loader(datasets["a"], **kw))
    via_torch = [b["input_ids"].numpy().copy()
                 for b in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)]
    assert len(ds) == len(direct) == len(via_torch)
    assert all(np.array_equal(x, y) for x, y in zip(direct, via_torch))
    with pytest.raises(RuntimeError, match="num_workers=0"):
        next(iter(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1)))


def test_int32_tokens_and_the_dense_attention_mask(datasets):
    loader = stoker.Loader(datasets["a"], seq_len=32, batch_size=2, token_dtype="int32",
                           attention_mask=True, pack="bestfit")
    b = next(iter(loader))
    assert b["input_ids"].dtype == torch.int32 and b["labels"].dtype == torch.int32
    mask = b["attention_mask"]
    assert mask.dtype == torch.uint8 and mask.shape == (2, 32, 32)
    seg = b["segment_ids"]
    causal = torch.ones(32, 32, dtype=torch.bool).tril()
    want = (seg[:, :, None] == seg[:, None, :]) & (seg[:, :, None] > 0) & causal
    assert torch.equal(mask.bool(), want)


def test_more_shards_than_the_mapping_budget_gives_the_same_batches(datasets, monkeypatch):
    """A process may keep only so many shards mapped (vm.max_map_count); past that budget shards
    are mapped on demand. With a budget of 2 shards the batches are the same."""
    assert stoker.inspect(datasets["a"])["shards"] > 4
    kw = dict(seq_len=SEQ, batch_size=BATCH, num_workers=3, seed=11, shuffle="global")
    want = run_epoch(stoker.Loader(datasets["a"], **kw))
    monkeypatch.setenv("STOKER_MAX_MAPPED_SHARDS", "2")  # read when a dataset opens
    got = run_epoch(stoker.Loader(datasets["a"], **kw))
    assert len(got) == len(want) > 5
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    monkeypatch.setenv("STOKER_MAX_MAPPED_SHARDS", "lots")
    with pytest.raises(ValueError, match="STOKER_MAX_MAPPED_SHARDS='lots'"):
        stoker.Loader(datasets["a"], **kw)


def test_a_batch_holds_only_arrays_and_the_loader_says_where_it_stands(datasets):
    # docs/loader.md, "What a batch holds": every value of a batch is an array (so that
    # `{k: v.to(device) for k, v in batch.items()}` works); the step's scalars come from the
    # loader: its epoch, its position (state_dict) and stats()["trained_tokens"].
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, output="numpy")
    trained = 0
    for i, batch in enumerate(loader):
        assert all(isinstance(v, np.ndarray) for v in batch.values())
        if i + 1 < len(loader):  # after the last batch the state is the next epoch's start
            assert loader.state_dict()["plan_state"]["rows_consumed"] == (i + 1) * BATCH
        trained += int((batch["labels"] != -100).sum())
        assert loader.stats()["trained_tokens"] == trained
    assert loader.epoch == 1
