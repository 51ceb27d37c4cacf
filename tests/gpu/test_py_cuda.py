"""stoker.Loader(device="cuda:N") from Python, on a real GPU (run by scripts/gpu-check; CI has no
GPU and does not collect tests/gpu).

- device batches equal host batches, for both token dtypes and two packings;
- the tensors live on the asked device, as zero-copy views of the copier's device buffers;
- the consumer's stream only waits for its batch, and a device buffer is not overwritten while
  kernels queued on that stream still read it (a busy kernel runs before every read);
- the synthetic loader serves device batches too.
"""

import json
import random
from pathlib import Path

import pytest
import torch

import stoker

SEQ, BATCH = 256, 8

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("cuda_data")
    rng = random.Random(5)
    src = root / "docs.jsonl"
    with src.open("w") as f:
        for _ in range(600):
            text = "".join(rng.choice("abcdefghij klmnop\n") for _ in range(rng.randint(1, 900)))
            f.write(json.dumps({"text": text}) + "\n")
    out = root / "ds"
    stoker.pack([src], out, "bytes", threads=2, shard_size="64KiB")
    return str(out)


def host_epoch(dataset, **kw):
    loader = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, output="torch", **kw)
    return [{k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in b.items()}
            for b in loader]


@pytest.mark.parametrize("token_dtype,pack", [("int64", "concat"), ("int32", "bestfit")])
def test_device_batches_equal_host_batches(dataset, token_dtype, pack):
    kw = dict(num_workers=3, seed=11, pack=pack, token_dtype=token_dtype)
    expected = host_epoch(dataset, **kw)
    loader = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, device="cuda:0", **kw)
    got = 0
    for batch, want in zip(loader, expected):
        for name, tensor in want.items():
            if not isinstance(tensor, torch.Tensor):
                assert batch[name] == tensor, name
                continue
            dev = batch[name]
            assert dev.is_cuda and dev.device.index == 0, name
            assert dev.dtype == tensor.dtype, name
            assert torch.equal(dev.cpu(), tensor), f"batch {got}: {name} differs"
        got += 1
    assert got == len(expected) == len(loader) > 10
    stats = loader.stats()
    assert stats["device_batches"] is True and stats["copy_s"] > 0


def test_a_device_buffer_outlives_the_kernels_queued_on_it(dataset):
    """Each read is queued behind a ~5 ms busy kernel on a side stream. If the copier reused a
    device buffer as soon as Python let go of the tensors (before the GPU ran the read), later
    batches would overwrite earlier ones and the clones would differ from the host batches."""
    kw = dict(num_workers=2, seed=3, device_buffers=2)
    expected = host_epoch(dataset, **kw)
    side = torch.cuda.Stream(device=0)
    clones = []
    with torch.cuda.stream(side):
        loader = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, device="cuda:0", **kw)
        for batch in loader:
            torch.cuda._sleep(10_000_000)  # about 5 ms at the H200's clock
            clones.append((batch["input_ids"].clone(), batch["position_ids"].clone()))
            del batch
    side.synchronize()
    assert len(clones) == len(expected) > 10
    for i, ((ids, pos), want) in enumerate(zip(clones, expected)):
        assert torch.equal(ids.cpu(), want["input_ids"]), f"batch {i}: input_ids overwritten"
        assert torch.equal(pos.cpu(), want["position_ids"]), f"batch {i}: position_ids overwritten"


def test_state_dict_resume_on_the_device(dataset):
    kw = dict(num_workers=2, seed=9)
    expected = host_epoch(dataset, **kw)
    loader = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, device="cuda", **kw)
    it = iter(loader)
    for _ in range(4):
        next(it)
    state = loader.state_dict()
    del it, loader
    resumed = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, device="cuda", **kw)
    resumed.load_state_dict(state)
    rest = [b["input_ids"].cpu() for b in resumed]
    assert len(rest) == len(expected) - 4
    for got, want in zip(rest, expected[4:]):
        assert torch.equal(got, want["input_ids"])


def test_synthetic_device_batches(dataset):
    host = [b["input_ids"].clone() for b in
            stoker.Loader.synthetic(seq_len=SEQ, batch_size=BATCH, seed=2, steps=3,
                                    output="torch")]
    dev = list(stoker.Loader.synthetic(seq_len=SEQ, batch_size=BATCH, seed=2, steps=3,
                                       device="cuda:0"))
    assert len(dev) == 3
    for b, want in zip(dev, host):
        assert b["input_ids"].is_cuda
        assert torch.equal(b["input_ids"].cpu(), want)


def test_cpu_batches_stay_on_the_host(dataset):
    loader = stoker.Loader(dataset, seq_len=SEQ, batch_size=BATCH, device=None, output="torch")
    batch = next(iter(loader))
    assert not batch["input_ids"].is_cuda
    assert Path(dataset).exists()
