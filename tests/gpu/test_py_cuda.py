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


def byte_level_model_dir(root: Path) -> Path:
    """A model directory without any download or trainer: a byte-level BPE tokenizer.json with
    the 256 byte tokens and no merges, Qwen's two control tokens, and Qwen2.5's chat template."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = list(bs), 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    vocab = {"<|im_start|>": 0, "<|im_end|>": 1}
    for k, c in enumerate(sorted(zip(bs, cs))):
        vocab[chr(c[1])] = 2 + k
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}
                            for t, i in (("<|im_start|>", 0), ("<|im_end|>", 1))],
           "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                             "use_regex": True},
           "post_processor": None,
           "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                       "use_regex": True},
           "model": {"type": "BPE", "dropout": None, "unk_token": None,
                     "continuing_subword_prefix": None, "end_of_word_suffix": None,
                     "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": []}}
    d = root / "model"
    d.mkdir()
    (d / "tokenizer.json").write_text(json.dumps(tok))
    template = Path(__file__).resolve().parents[1] / "data" / "chat_templates" / "qwen2_5.jinja"
    (d / "tokenizer_config.json").write_text(json.dumps({
        "eos_token": "<|im_end|>", "chat_template": template.read_text(encoding="utf-8"),
        "added_tokens_decoder": {"0": {"content": "<|im_start|>", "special": True},
                                 "1": {"content": "<|im_end|>", "special": True}}}))
    return d


def test_chat_device_batches_carry_the_loss_mask(tmp_path):
    """Chat data: labels and loss_mask reach the device with the rest of the batch (one copy of
    the whole slot), equal to the host batch's."""
    rng = random.Random(3)
    words = "sun rain wind snow river stone".split()
    say = lambda k: " ".join(rng.choice(words) for _ in range(k))  # noqa: E731
    src = tmp_path / "chats.jsonl"
    with src.open("w") as f:
        for _ in range(200):
            msgs = [{"role": "user", "content": say(rng.randint(1, 8))},
                    {"role": "assistant", "content": say(rng.randint(1, 12))}]
            f.write(json.dumps({"messages": msgs}) + "\n")
    out = tmp_path / "sft"
    stoker.pack([src], out, tokenizer=str(byte_level_model_dir(tmp_path)))
    kw = dict(pack="bestfit", num_workers=2, seed=1)
    expected = host_epoch(str(out), **kw)
    assert expected and "loss_mask" in expected[0]
    loader = stoker.Loader(str(out), seq_len=SEQ, batch_size=BATCH, device="cuda:0", **kw)
    got = 0
    for batch, want in zip(loader, expected):
        for name in ("input_ids", "labels", "loss_mask", "segment_ids"):
            assert batch[name].is_cuda, name
            assert torch.equal(batch[name].cpu(), want[name]), f"batch {got}: {name} differs"
        assert torch.equal(batch["loss_mask"].bool(), batch["labels"] != -100)
        got += 1
    assert got == len(expected) > 0
