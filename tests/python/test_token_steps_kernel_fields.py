"""Steps counted in tokens (tokens_per_step, issue 45) carry the kernel metadata of issue 46:
host cu_seqlens and max_seqlen equal to the tensors, seq_idx following cu_seqlens, and FlexAttention
block tables equal to torch's create_block_mask for each microbatch. The options the token-step
planner does not place yet (pad_each_document_to, max_documents_per_row, context_parallel, which
pads) are refused at open, naming the option, instead of failing a batch mid-run."""

import json

import numpy as np
import pytest
import torch

import stoker
from stoker import flex
from test_flex_block_mask import torch_mask

BUDGET, BLOCK = 1024, 128


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("token-steps-kernel")
    rng = np.random.default_rng(3)
    with open(root / "docs.jsonl", "w") as f:
        for i in range(200):
            f.write(json.dumps({"text": f"<{i}>" + "x" * int(rng.integers(2, 600))}) + "\n")
    stoker.pack([root / "docs.jsonl"], root / "ds", "bytes")
    return str(root / "ds")


def open_loader(path, **kw):
    return stoker.Loader(path, tokens_per_step=8192, microbatches=2,
                         max_tokens_per_microbatch=BUDGET, seed=5, world_size=2, rank=1,
                         num_workers=2, **kw)


def test_token_steps_carry_host_metadata_seq_idx_and_flex_tables(dataset):
    checked = 0
    with open_loader(dataset, output="torch", seq_idx=True,
                     flex_block_mask=(BLOCK, "causal")) as loader:
        for batch in loader:
            cu = batch["cu_seqlens"]
            assert batch["input_ids"].shape == (1, BUDGET)
            torch.testing.assert_close(torch.as_tensor(np.asarray(batch.cu_seqlens_host)), cu)
            assert batch.max_seqlen == int((cu[1:] - cu[:-1]).max())
            want = torch.repeat_interleave(torch.arange(cu.numel() - 1, dtype=torch.int32),
                                           (cu[1:] - cu[:-1]).long())
            torch.testing.assert_close(batch["seq_idx"].reshape(-1), want)
            got = flex.split_tables(batch["flex_block_tables"], 1, BUDGET, BLOCK)
            ref = torch_mask(cu.numpy(), 1, BUDGET, BLOCK, "causal", None)
            for name in flex.TABLES:
                np.testing.assert_array_equal(got[name], getattr(ref, name).numpy(),
                                              err_msg=name)
            checked += 1
            if checked == 12:
                break
    assert checked == 12


@pytest.mark.parametrize("option, name", [
    (dict(pad_each_document_to=8), "pad_each_document_to"),
    (dict(max_documents_per_row=3), "max_documents_per_row"),
    (dict(context_parallel=(2, 0)), "context_parallel")])
def test_what_token_steps_cannot_place_yet_is_refused_at_open(dataset, option, name):
    with pytest.raises(ValueError, match=f"tokens_per_step does not go with {name}"):
        open_loader(dataset, output="numpy", **option)
