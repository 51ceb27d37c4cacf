"""Steps counted in tokens (tokens_per_step, issue 45) carry the kernel metadata of issue 46:
host cu_seqlens and max_seqlen equal to the tensors, seq_idx following cu_seqlens, and FlexAttention
block tables equal to torch's create_block_mask for each microbatch. With pad_each_document_to,
max_documents_per_row and context_parallel (which pads to 2 * cp): every document served once at
W = 1 and 3 (its tokens found by its "<i>" head), each microbatch within its budget counting the
padding and within the cap, padding untrained, the step's figures unpadded; the CP shares gather
back the whole microbatch and keep every token of odd documents (TransformerEngine #1930); resume
is bit-exact; a budget that is no multiple of the padding is refused naming both."""

import json

import numpy as np
import pytest
import torch

import stoker
from stoker import flex
from test_flex_block_mask import torch_mask
from test_py_context_parallel import check_share, share_positions
from test_stream_kernel_fields import check_bit_exact_resume, check_padded_layout, copied

BUDGET, BLOCK = 1024, 128
EOS = 256  # the bytes tokenizer's end of document


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
    args = dict(tokens_per_step=8192, microbatches=2, max_tokens_per_microbatch=BUDGET, seed=5,
                world_size=2, rank=1, num_workers=2)
    args.update(kw)
    return stoker.Loader(path, **args)


@pytest.fixture(scope="module")
def documents(dataset):
    """Each document's tokens (its text's bytes and the end of document) by its index i."""
    lines = open(dataset[:-len("ds")] + "docs.jsonl").read().splitlines()
    return {i: list(json.loads(line)["text"].encode()) + [EOS] for i, line in enumerate(lines)}


def pieces_of(b):
    """The real tokens of each document of a microbatch (at its padded offset); the row's tail
    (a segment of pad ids, as in fixed rows) is no document: every document starts with "<"."""
    cu, cup = np.asarray(b["cu_seqlens"]), np.asarray(b["cu_seqlens_padded"])
    ids = b["input_ids"].reshape(-1)
    return [ids[cup[k]:cup[k] + cu[k + 1] - cu[k]] for k in range(len(cu) - 1)
            if cu[k + 1] > cu[k] and ids[cup[k]] == ord("<")]


def document_of(tokens):
    head = bytes(int(t) for t in tokens[:6]).split(b">")[0]
    return int(head[1:])


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


M, CAP = 8, 3


@pytest.mark.parametrize("world", [1, 3])
def test_every_option_on_serves_each_document_once_within_budget_and_cap(dataset, documents,
                                                                         world):
    ranks = [open_loader(dataset, world_size=world, rank=r, pad_each_document_to=M,
                         max_documents_per_row=CAP, seq_idx=True, output="numpy")
             for r in range(world)]
    served = {}
    capped, padded, step = 0, 0, []
    for batches in zip(*ranks):
        got = [copied(b) for b in batches]
        for b in got:
            assert b["input_ids"].shape == (1, BUDGET)
            check_padded_layout(b, M)  # rooms within the budget, padding untrained
            docs = pieces_of(b)
            assert 0 < len(docs) <= CAP
            capped += len(docs) == CAP
            cu = np.asarray(b["cu_seqlens"])
            padded += int(np.asarray(b["cu_seqlens_padded"])[-1] - cu[-1])
            for tokens in docs:
                i = document_of(tokens)
                assert i not in served, f"document {i} served twice"
                served[i] = tokens
        step += got
        # The step's figures count real tokens and trained targets, never padding.
        if int(got[0]["microbatch"]) == int(got[0]["microbatches"]) - 1:
            real = sum(len(t) for b in step for t in pieces_of(b))
            trained = sum(int((b["labels"] != -100).sum()) for b in step)
            assert int(got[0]["global_tokens"]) == real
            assert int(got[0]["global_trained_tokens"]) == trained
            step = []
    for r in ranks:
        r.close()
    assert capped > 0 and padded > 0, "the cap and the padding were exercised"
    assert sorted(served) == sorted(documents)
    for i, tokens in served.items():
        np.testing.assert_array_equal(tokens, documents[i], err_msg=f"document {i}")


def test_cp_shares_gather_back_each_microbatch_and_keep_odd_documents(dataset, documents):
    """context_parallel=(2, r) (padding to 4 implied): the two shares of each microbatch gather
    back the whole one (pad_each_document_to=4, no CP), and every odd-length document keeps its
    last token (TransformerEngine #1930)."""
    kw = dict(seq_idx=True, output="numpy")
    whole = [copied(b) for b in open_loader(dataset, pad_each_document_to=4, **kw)]
    shares = [[copied(b) for b in open_loader(dataset, context_parallel=(2, r), **kw)]
              for r in range(2)]
    check_cp_shares(whole, shares, BUDGET, documents)


def check_cp_shares(whole, shares, budget, documents):
    """The two CP shares of each microbatch gather back the whole one (padded to 4, no CP), and
    every document found in it is whole, odd-length ones included (TransformerEngine #1930)."""
    assert len(whole) == len(shares[0]) == len(shares[1]) > 4
    odd = 0
    for full, a, b in zip(whole, *shares):
        assert a["max_seqlen"] == full["max_seqlen"] and a["input_ids"].shape == (1, budget // 2)
        for r, part in enumerate((a, b)):
            check_share(full, part, 2, r, "zigzag")
        flat = np.full(budget, -1, np.int64)
        for r, part in enumerate((a, b)):
            flat[share_positions(full["cu_seqlens_padded"], 2, r, "zigzag")] = \
                part["input_ids"].reshape(-1)
        for tokens in pieces_of(dict(full, input_ids=flat)):
            np.testing.assert_array_equal(tokens, documents[document_of(tokens)])
            odd += len(tokens) % 2
    assert odd > 10, "odd-length documents were tested"


def test_resume_is_bit_exact_with_every_option_on(dataset):
    kw = dict(world_size=3, rank=2, pad_each_document_to=8, max_documents_per_row=4,
              context_parallel=(2, 1), seq_idx=True, output="numpy")
    check_bit_exact_resume(lambda **more: open_loader(dataset, **dict(kw, **more)), 5)


def test_a_budget_that_is_no_multiple_of_the_padding_is_refused_naming_both(dataset):
    with pytest.raises(ValueError, match="max_tokens_per_microbatch=1000 must be a multiple of "
                                         "pad_each_document_to=64"):
        open_loader(dataset, max_tokens_per_microbatch=1000, pad_each_document_to=64,
                    output="numpy")
    with pytest.raises(ValueError, match="max_tokens_per_microbatch=1020 must be a multiple of "
                                         "pad_each_document_to=8"):
        open_loader(dataset, max_tokens_per_microbatch=1020, context_parallel=(4, 0),
                    output="numpy")
