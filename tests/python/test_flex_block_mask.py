"""FlexAttention block tables from stoker (C++, on the CPU) against torch's own create_block_mask,
on random packed batches and on a real loader batch; and flex_attention's output with either mask."""

import json

import numpy as np
import pytest
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import stoker
from stoker import flex

pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")


def random_cu_seqlens(rng, rows, seq_len, max_doc):
    cu = [0]
    for r in range(rows):
        at = 0
        while at < seq_len:
            at = min(seq_len, at + int(rng.integers(1, max_doc + 1)))
            cu.append(r * seq_len + at)
    return np.array(cu, dtype=np.int32)


def seq_idx_of(cu, rows, seq_len):
    lengths = np.diff(cu)
    return torch.from_numpy(np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
                            ).view(rows, seq_len)


def torch_mask(cu, rows, seq_len, block, kind, window):
    seq_idx = seq_idx_of(cu, rows, seq_len)

    def document_mask(b, h, q, k):
        allowed = (seq_idx[b, q] == seq_idx[b, k]) & (q >= k)
        return allowed & (q - k < window) if kind == "sliding_window" else allowed

    return create_block_mask(document_mask, rows, None, seq_len, seq_len, device="cpu",
                             BLOCK_SIZE=block)


CASES = [(2, 256, 32, "causal", None, 70), (1, 512, 64, "causal", None, 300),
         (3, 200, 32, "causal", None, 40), (2, 256, 32, "sliding_window", 48, 120),
         (1, 384, 128, "sliding_window", 100, 500)]


@pytest.mark.parametrize("rows,seq_len,block,kind,window,max_doc", CASES)
def test_tables_equal_create_block_mask(rows, seq_len, block, kind, window, max_doc):
    rng = np.random.default_rng(seq_len + block)
    for _ in range(3):
        cu = random_cu_seqlens(rng, rows, seq_len, max_doc)
        want = torch_mask(cu, rows, seq_len, block, kind, window)
        got = flex.block_tables(cu, rows, seq_len, block, kind, window)
        for name in flex.TABLES:
            np.testing.assert_array_equal(got[name], getattr(want, name).numpy(), err_msg=name)


def test_flex_attention_output_is_the_same_with_either_mask():
    rng = np.random.default_rng(3)
    rows, seq_len, block = 2, 256, 64
    cu = random_cu_seqlens(rng, rows, seq_len, 90)
    q, k, v = (torch.randn(rows, 2, seq_len, 16, generator=torch.Generator().manual_seed(i))
               for i in range(3))
    ours = flex.block_mask(cu, rows, seq_len, block)
    theirs = torch_mask(cu, rows, seq_len, block, "causal", None)
    out = flex_attention(q, k, v, block_mask=ours)
    torch.testing.assert_close(out, flex_attention(q, k, v, block_mask=theirs))
    # And both equal plain attention run per document (the CPU reference).
    for r in range(rows):
        for s, e in zip(cu[:-1], cu[1:]):
            if not r * seq_len <= s < (r + 1) * seq_len:
                continue
            a, b = s - r * seq_len, e - r * seq_len
            ref = torch.nn.functional.scaled_dot_product_attention(
                q[r:r + 1, :, a:b], k[r:r + 1, :, a:b], v[r:r + 1, :, a:b], is_causal=True)
            torch.testing.assert_close(out[r:r + 1, :, a:b], ref, atol=1e-5, rtol=1e-4)


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("flex")
    rng = np.random.default_rng(5)
    src = tmp_path / "docs.jsonl"
    with open(src, "w") as f:
        for n in rng.integers(5, 300, size=60):
            f.write(json.dumps({"text": "x" * int(n)}) + "\n")
    out = tmp_path / "ds"
    stoker.pack([src], out, "bytes")
    return str(out)


def test_tables_of_a_real_packed_batch(packed):
    loader = stoker.Loader(packed, seq_len=256, batch_size=2, pack="bestfit", output="numpy",
                           world_size=1, rank=0)
    batch = next(iter(loader))
    cu = batch["cu_seqlens"]
    assert len(cu) > 4  # several documents and a padding run
    want = torch_mask(cu, 2, 256, 32, "causal", None)
    got = flex.block_tables(cu, 2, 256, 32)
    for name in flex.TABLES:
        np.testing.assert_array_equal(got[name], getattr(want, name).numpy(), err_msg=name)


FLEX_OPTIONS = [dict(flex_block_mask=(32, "causal")),
                dict(flex_block_mask=(64, "sliding_window", 40), pad_each_document_to=8),
                dict(flex_block_mask=(32, "causal"), max_documents_per_row=3)]


@pytest.mark.parametrize("options", FLEX_OPTIONS, ids=["causal", "window_padded", "max_docs"])
def test_the_loader_carries_the_tables_of_each_batch(packed, options):
    """flex_block_mask=(block_size, kind[, window]): the workers build the tables; they equal
    create_block_mask's for the batch's own segments, and flex_attention agrees."""
    block, kind = options["flex_block_mask"][:2]
    window = options["flex_block_mask"][2] if kind == "sliding_window" else None
    kw = dict(seq_len=256, batch_size=2, pack="bestfit", output="numpy", seq_idx=True)
    with stoker.Loader(packed, **kw, **options) as loader:
        for step, batch in enumerate(loader):
            cu = batch.get("cu_seqlens_padded", batch["cu_seqlens"])
            want = torch_mask(cu, 2, 256, block, kind, window)
            got = flex.split_tables(batch["flex_block_tables"], 2, 256, block)
            for name in flex.TABLES:
                np.testing.assert_array_equal(got[name], getattr(want, name).numpy(),
                                              err_msg=name)
            if step == 0:
                ours = flex.batch_block_mask(batch, block, kind, window)
                q, k, v = (torch.randn(2, 1, 256, 16, generator=torch.Generator().manual_seed(i))
                           for i in range(3))
                torch.testing.assert_close(flex_attention(q, k, v, block_mask=ours),
                                           flex_attention(q, k, v, block_mask=want))
    assert step > 2
    plain = next(iter(stoker.Loader(packed, **kw)))
    assert "flex_block_tables" not in plain


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="needs a window"):
        flex.block_tables(np.array([0, 8], np.int32), 1, 8, 8, "sliding_window")
    with pytest.raises(ValueError, match="'causal' or 'sliding_window'"):
        flex.block_tables(np.array([0, 8], np.int32), 1, 8, 8, "document")
    with pytest.raises(ValueError, match="crosses rows"):
        flex.block_tables(np.array([0, 10, 16], np.int32), 2, 8, 8)
