"""A Python batch is a dict of arrays only, with its step's figures as attributes (docs/loader.md,
"What a batch holds"): epoch, step, real/trained tokens, max_seqlen, cu_seqlens_host and
state_after, each checked against the arrays and the loader's own state."""

import json

import numpy as np
import pytest

import stoker


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("figures")
    rng = np.random.default_rng(11)
    src = root / "docs.jsonl"
    with open(src, "w") as f:
        for n in rng.integers(3, 400, size=120):
            f.write(json.dumps({"text": "ab" * int(n)}) + "\n")
    stoker.pack([src], root / "ds", "bytes", shard_size="4KiB")
    return str(root / "ds")


def test_figures_agree_with_the_arrays(dataset):
    loader = stoker.Loader(dataset, seq_len=128, batch_size=3, pack="bestfit", output="numpy",
                           world_size=1, rank=0)
    for k, batch in enumerate(loader):
        assert all(isinstance(v, np.ndarray) for v in batch.values())
        assert (batch.epoch, batch.step) == (0, k)
        cu = batch["cu_seqlens"]
        np.testing.assert_array_equal(batch.cu_seqlens_host, cu)
        assert isinstance(batch.max_seqlen, int) and batch.max_seqlen == int(np.diff(cu).max())
        assert batch.trained_tokens == int((batch["labels"] != -100).sum())
        assert 0 < batch.real_tokens <= 3 * 128
        if k == 4:
            break


def test_state_after_resumes_at_the_next_batch(dataset):
    loader = stoker.Loader(dataset, seq_len=128, batch_size=2, output="numpy", world_size=1,
                           rank=0)
    it = iter(loader)
    first = next(it)
    state = first.state_after
    assert state == loader.state_dict()  # nothing fetched after it yet
    second = {k: v.copy() for k, v in next(it).items()}
    resumed = stoker.Loader(dataset, seq_len=128, batch_size=2, output="numpy", world_size=1,
                            rank=0)
    resumed.load_state_dict(state)
    again = next(iter(resumed))
    assert again.step == 1
    for name, array in second.items():
        np.testing.assert_array_equal(again[name], array, err_msg=name)


def test_device_style_copy_of_a_batch_keeps_only_arrays(dataset):
    torch = pytest.importorskip("torch")
    loader = stoker.Loader(dataset, seq_len=64, batch_size=2, output="torch", world_size=1,
                           rank=0)
    batch = next(iter(loader))
    moved = {k: v.to("cpu", copy=True) for k, v in batch.items()}
    assert set(moved) == set(batch)
    assert isinstance(batch.cu_seqlens_host, torch.Tensor)
    assert batch.cu_seqlens_host.device.type == "cpu"
