"""context_parallel=(cp_size, cp_rank) and cp_layout: each CP rank's share of every row, on real
packed batches. Gathering every rank's share by the documented layout gives back the whole batch;
causal attention per document computed from the shares (keys gathered by segment and position, as
ring attention exchanges them) equals the whole batch's, with real torch on the CPU."""

import json

import numpy as np
import pytest
import torch

import stoker

SEQ, BATCH = 128, 2
KEYS = ("input_ids", "labels", "position_ids", "segment_ids", "seq_idx")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("cp")
    rng = np.random.default_rng(3)
    lines = [json.dumps({"text": f"<{i}>" + "abcdefg"[i % 7] * int(rng.integers(0, 150))})
             for i in range(200)]
    (root / "docs.jsonl").write_text("\n".join(lines) + "\n")
    stoker.pack(root / "docs.jsonl", root / "ds", "bytes")
    return str(root / "ds")


def batches(path, **kw):
    args = dict(seq_len=SEQ, batch_size=BATCH, pack="bestfit", num_workers=2, output="numpy",
                seq_idx=True)
    args.update(kw)
    with stoker.Loader(path, **args) as loader:
        return [({k: v.copy() for k, v in b.items()}, b.max_seqlen) for b in loader]


def share_positions(cu_padded, cp, rank, layout):
    """Flattened positions of the whole batch that `rank` holds, in its order (docs/loader.md)."""
    out = []
    for a, b in zip(cu_padded[:-1], cu_padded[1:]):
        n = b - a
        if layout == "zigzag":
            c = n // (2 * cp)
            out += list(range(a + rank * c, a + (rank + 1) * c))
            out += list(range(a + (2 * cp - 1 - rank) * c, a + (2 * cp - rank) * c))
        else:
            c = n // cp
            out += list(range(a + rank * c, a + (rank + 1) * c))
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("cp,layout", [(2, "zigzag"), (4, "zigzag"), (2, "contiguous")])
def test_gathering_every_share_gives_back_the_whole_batch(dataset, cp, layout):
    m = (2 if layout == "zigzag" else 1) * cp * 2  # a multiple of what the layout needs
    whole = batches(dataset, pad_each_document_to=m)
    shares = [batches(dataset, pad_each_document_to=m, context_parallel=(cp, r), cp_layout=layout)
              for r in range(cp)]
    assert len(whole) > 3 and all(len(s) == len(whole) for s in shares)
    for step, (full, max_seqlen) in enumerate(whole):
        cup = full["cu_seqlens_padded"]
        for r in range(cp):
            part, part_max = shares[r][step]
            assert part_max == max_seqlen  # metadata of the whole rows on every rank
            check_share(full, part, cp, r, layout)


def check_share(full, part, cp, rank, layout, keys=KEYS):
    """`part` is CP rank `rank`'s share of the whole batch `full`: the whole rows' cu_seqlens
    and cu_seqlens_padded, and each of `keys` at the layout's positions."""
    cup = full["cu_seqlens_padded"]
    np.testing.assert_array_equal(part["cu_seqlens"], full["cu_seqlens"])
    np.testing.assert_array_equal(part["cu_seqlens_padded"], cup)
    where = share_positions(cup, cp, rank, layout)
    rows, seq = full["input_ids"].shape
    for key in keys:
        assert part[key].shape == (rows, seq // cp)
        np.testing.assert_array_equal(part[key].reshape(-1), full[key].reshape(-1)[where],
                                      err_msg=key)


def attention_per_document(q, k, v, same_doc_and_causal):
    scores = (q @ k.T) / q.shape[-1] ** 0.5
    scores = scores.masked_fill(~same_doc_and_causal, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def test_attention_from_the_shares_equals_the_whole_batchs(dataset):
    cp = 2
    torch.manual_seed(0)
    emb = torch.randn(300, 16, dtype=torch.float64)
    wq, wk, wv = (torch.randn(16, 16, dtype=torch.float64) for _ in range(3))
    full, _ = batches(dataset, pad_each_document_to=4, seq_len=SEQ)[1]
    shares = [batches(dataset, context_parallel=(cp, r))[1][0] for r in range(cp)]  # m implied
    for row in range(BATCH):
        ids = torch.as_tensor(full["input_ids"][row])
        seg = torch.as_tensor(full["segment_ids"][row])
        pos = torch.as_tensor(full["position_ids"][row])
        x = emb[ids]
        allowed = ((seg[:, None] == seg[None, :]) & (pos[None, :] <= pos[:, None])
                   & (seg[:, None] > 0))
        allowed |= torch.eye(len(ids), dtype=torch.bool)  # padding attends itself only
        want = attention_per_document(x @ wq, x @ wk, x @ wv, allowed)
        # Every rank's keys and values, gathered by (segment, position): what ring attention
        # exchanges. Each rank's queries attend them under the same rule.
        pool_seg = torch.cat([torch.as_tensor(s["segment_ids"][row]) for s in shares])
        pool_pos = torch.cat([torch.as_tensor(s["position_ids"][row]) for s in shares])
        pool_x = torch.cat([emb[torch.as_tensor(s["input_ids"][row])] for s in shares])
        for r, s in enumerate(shares):
            qs, qp = torch.as_tensor(s["segment_ids"][row]), torch.as_tensor(s["position_ids"][row])
            xq = emb[torch.as_tensor(s["input_ids"][row])]
            ok = ((qs[:, None] == pool_seg[None, :]) & (pool_pos[None, :] <= qp[:, None])
                  & (qs[:, None] > 0))
            got = attention_per_document(xq @ wq, pool_x @ wk, pool_x @ wv, ok)
            where = share_positions(full["cu_seqlens_padded"], cp, r, "zigzag")
            where = where[(where >= row * SEQ) & (where < (row + 1) * SEQ)] - row * SEQ
            real = qs > 0  # padding rows of the mask differ (no key or only itself): not compared
            torch.testing.assert_close(got[real], want[torch.as_tensor(where)][real])


def test_a_share_without_padding_is_refused_clearly(dataset):
    with pytest.raises(ValueError, match="pad_each_document_to to a multiple of 2 \\* cp_size = 4"):
        stoker.Loader(dataset, seq_len=SEQ, batch_size=1, pack="bestfit",
                      pad_each_document_to=2, context_parallel=(2, 0))
    with pytest.raises(ValueError, match="context_parallel must be \\(cp_size, cp_rank\\)"):
        stoker.Loader(dataset, seq_len=SEQ, batch_size=1, pack="bestfit", context_parallel=2)
