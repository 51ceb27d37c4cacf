"""The Loader's public description for adapters (stoker.integrations): rank, world_size,
seq_len, batch_size, datasets, is_stream, options, steps_per_epoch() and state_dict_at()."""

import numpy as np
import pytest

import stoker
from test_py_data import datasets  # noqa: F401

SEQ, BATCH = 16, 2


def test_the_loader_says_what_it_was_built_with(datasets):
    loader = stoker.Loader([(0.7, datasets["a"]), (0.3, datasets["b"])], seq_len=SEQ,
                           batch_size=BATCH, rank=1, world_size=3, prefetch_factor=3,
                           shuffle=False, position_ids=False, output="numpy")
    assert (loader.rank, loader.world_size) == (1, 3)
    assert (loader.seq_len, loader.batch_size) == (SEQ, BATCH)
    assert loader.datasets == [(str(datasets["a"]), 0.7), (str(datasets["b"]), 0.3)]
    assert loader.is_stream is False
    opts = loader.options
    assert opts["prefetch_factor"] == 3 and opts["shuffle"] == "none"
    assert opts["position_ids"] is False and opts["segment_ids"] is True
    keywords = stoker.Loader.__init__.__code__.co_varnames
    assert "seq_len" in opts and all(name in keywords for name in opts)
    # A copy: changing it changes neither the loader nor what it reports next time.
    opts["batch_size"] = 99
    loader.datasets.clear()
    assert loader.batch_size == BATCH and loader.options["batch_size"] == BATCH
    assert len(loader.datasets) == 2


def test_steps_per_epoch_is_len_and_counts_any_epoch(datasets):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, output="numpy")
    assert loader.steps_per_epoch() == len(loader) == loader.steps_per_epoch(0)
    planned = [loader.steps_per_epoch(e) for e in range(3)]
    assert planned == [sum(1 for _ in loader) for _ in range(3)]
    with pytest.raises(ValueError, match="epoch must be"):
        loader.steps_per_epoch(-1)


def test_state_dict_at_seeks_to_the_step_without_reading_batches(datasets):
    kw = dict(seq_len=SEQ, batch_size=BATCH, seed=5, output="numpy")
    whole = stoker.Loader(datasets["a"], **kw)
    first = [b["input_ids"].copy() for b in whole]
    second = [b["input_ids"].copy() for b in whole]
    assert len(first) > 4
    seeker = stoker.Loader(datasets["a"], **kw)
    seeker.load_state_dict(seeker.state_dict_at(1, 3))
    assert seeker.epoch == 1 and seeker.steps_remaining() == len(second) - 3
    got = [b["input_ids"].copy() for b in seeker]
    assert len(got) == len(second) - 3
    for a, b in zip(got, second[3:]):
        np.testing.assert_array_equal(a, b)
    # The same position as the state the loader itself writes after three batches of epoch 0.
    stepper = stoker.Loader(datasets["a"], **kw)
    for _, _batch in zip(range(3), stepper):
        pass
    assert stepper.state_dict() == stepper.state_dict_at(0, 3)


def test_state_dict_at_counts_global_steps_on_any_world_size(datasets):
    kw = dict(seq_len=SEQ, seed=5, output="numpy")
    one = stoker.Loader(datasets["a"], batch_size=2 * BATCH, world_size=1, **kw)
    two = stoker.Loader(datasets["a"], batch_size=BATCH, world_size=2, rank=1, **kw)
    for state in (one.state_dict_at(0, 2), two.state_dict_at(0, 2)):
        plan = state["plan_state"]
        assert (plan["epoch"], plan["rows_consumed"]) == (0, 2 * 2 * BATCH)
    # Rank 1 of two, seeked to step 2, serves the second half of the one-rank loader's step 2.
    whole = [b["input_ids"].copy() for b in one]
    two.load_state_dict(two.state_dict_at(0, 2))
    np.testing.assert_array_equal(next(iter(two))["input_ids"], whole[2][BATCH:])


def test_state_dict_at_refuses_bad_positions_and_streams(datasets, tmp_path):
    loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, output="numpy")
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="must be an integer"):
            loader.state_dict_at(0, bad)
    (tmp_path / "part-0.jsonl").write_text("".join(f'{{"text": "doc {i} ' + "x" * 40 + '"}\n'
                                                   for i in range(40)))
    stream = stoker.Loader(stoker.Stream(str(tmp_path / "part-*.jsonl"), shuffle_buffer=8),
                           seq_len=SEQ, batch_size=BATCH, output="numpy")
    assert stream.is_stream is True and stream.datasets == []
    with pytest.raises(ValueError, match="stream"):
        stream.state_dict_at(0, 1)
    stream.close()


def test_a_loader_is_freed_when_its_last_reference_goes(datasets):
    """No reference cycle holds a Loader (and its reading threads) until the cyclic GC runs:
    remote tests count requests right after a loader goes, and a loader left alive keeps reading.
    (One did: the constructor kept its own locals() dict, which held itself.)"""
    import gc
    import weakref
    gc.disable()
    try:
        for kw in ({}, {"context_parallel": (2, 1), "pack": "bestfit"},
                   {"flex_block_mask": (16, "causal")}):
            loader = stoker.Loader(datasets["a"], seq_len=SEQ, batch_size=BATCH, output="numpy",
                                   num_workers=1, **kw)
            next(iter(loader))
            ref = weakref.ref(loader)
            del loader
            assert ref() is None, f"a Loader built with {kw} outlived its last reference"
    finally:
        gc.enable()
