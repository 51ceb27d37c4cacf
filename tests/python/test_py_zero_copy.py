"""Zero copy and ownership: tensors are views of the loader's ring slots; a slot goes back to the
ring only when every tensor of its batch has died; tensors outlive the loader."""

import gc

import numpy as np
import pytest
import torch

import stoker
from test_py_data import datasets  # noqa: F401


def open_small_ring(path, **kw):
    # One worker and prefetch_factor 2: a ring of 3 slots.
    return stoker.Loader(path, seq_len=64, batch_size=4, num_workers=1, prefetch_factor=2, **kw)


def test_tensors_are_ring_slots_and_return_when_all_tensors_die(datasets):
    loader = open_small_ring(datasets["a"])
    slots = loader.stats()["ring_slots"]
    assert slots == 3
    it = iter(loader)
    held = [next(it) for _ in range(slots)]
    ptrs = [b["input_ids"].data_ptr() for b in held]
    assert len(set(ptrs)) == slots
    # Every tensor of a batch lives in its slot's block, right after input_ids.
    for b in held:
        base = b["input_ids"].data_ptr()
        for name, t in b.items():
            assert 0 <= t.data_ptr() - base < 64 * 4 * 8 * 5, name
    assert loader.stats()["slots_in_use"] == slots
    with pytest.raises(ValueError, match="ring slot"):
        next(it)
    # One tensor alone keeps its batch's slot.
    labels0 = held[0]["labels"]
    expected_labels0 = labels0.clone()
    del held[0]
    gc.collect()
    with pytest.raises(ValueError, match="ring slot"):
        next(iter(loader))
    assert torch.equal(labels0, expected_labels0)  # not overwritten: the slot is still ours
    del labels0
    nxt = next(iter(loader))
    # The freed slot was refilled in place: the new batch's memory is the old batch's memory.
    assert nxt["input_ids"].data_ptr() == ptrs[0]
    assert loader.stats()["slots_in_use"] == slots


def test_numpy_arrays_are_views_of_the_same_memory(datasets):
    loader = open_small_ring(datasets["a"], output="numpy")
    it = iter(loader)
    b = next(it)
    assert not b["input_ids"].flags["OWNDATA"]
    ptrs = {next(it)["input_ids"].ctypes.data for _ in range(12)}
    assert b["input_ids"].ctypes.data not in ptrs  # held: never reused
    assert len(ptrs) <= loader.stats()["ring_slots"] - 1  # the rest cycle through the ring


def test_tensors_outlive_the_loader(datasets):
    loader = open_small_ring(datasets["a"])
    b = next(iter(loader))
    copy = {k: v.clone() for k, v in b.items()}
    loader.close()
    del loader
    gc.collect()
    for k in copy:
        assert torch.equal(b[k], copy[k])


def test_a_copy_per_batch_would_show_distinct_pointers(datasets):
    # Control for the tests above: cloning gives fresh memory, never a ring address.
    loader = open_small_ring(datasets["a"])
    ring = set()
    clones = []
    for i, b in zip(range(10), loader):
        ring.add(b["input_ids"].data_ptr())
        clones.append(b["input_ids"].clone())
    assert len(ring) <= 3
    assert not ring & {c.data_ptr() for c in clones}
    assert np.array_equal(clones[0].numpy(), clones[0].numpy())
