"""A stoker.Stream's batches ready for the attention kernel (issue 46): pad_each_document_to
(padding counted by the stream's packer: no row overflows, padding untrained),
max_documents_per_row (rows packed with fewer documents, never truncated), context_parallel
(every CP rank of a DP rank reads the same rank stream and keeps its share), seq_idx, host
cu_seqlens and max_seqlen. On real streamed batches (bytes tokenizer; a Qwen chat template),
checked against the documents themselves through provenance; with resume and real torch."""

import json

import numpy as np
import pytest
import torch

import stoker
from test_chat_loader import chat_dataset, chat_source  # noqa: F401 (fixtures)
from test_py_context_parallel import check_share, share_positions

SEQ, BATCH = 128, 2
EOS = 256  # the bytes tokenizer's end of document


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two JSONL files of documents of odd and even token counts (3..200 tokens, so that some
    are split across rows); the tokens of each document by (file, byte offset of its line)."""
    root = tmp_path_factory.mktemp("kstream")
    rng = np.random.default_rng(11)
    paths, docs = [], {}
    for f, n in enumerate((170, 90)):
        path = root / f"part-{f}.jsonl"
        at = 0
        with open(path, "wb") as out:
            for i in range(n):
                head = f"<{f}-{i}>"
                text = head + "abcdefgh"[i % 8] * int(rng.integers(0, 200 - len(head)))
                line = (json.dumps({"text": text}) + "\n").encode()
                docs[(str(path), at)] = list(text.encode()) + [EOS]
                out.write(line)
                at += len(line)
        paths.append(str(path))
    return paths, docs


def open_stream(paths, **kw):
    args = dict(seq_len=SEQ, batch_size=BATCH, pack="bestfit", bestfit_window=16, seed=5,
                num_workers=2, output="numpy", pin_memory=False)
    args.update(kw)
    return stoker.Loader(stoker.Stream(paths, tokenizer="bytes", shuffle_buffer=24,
                                       scan_cache=None), **args)


def copied(batch):
    out = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in batch.items()}
    out["max_seqlen"] = batch.max_seqlen
    out["cu_seqlens_host"] = np.array(batch.cu_seqlens_host)
    return out


def check_padded_layout(b, m):
    """cu_seqlens (real lengths) and cu_seqlens_padded (rooms, multiples of m) agree with seq_idx,
    max_seqlen and the host copy; padding is untrained. Returns the flat padded offsets."""
    cu, cup = np.asarray(b["cu_seqlens"]), np.asarray(b["cu_seqlens_padded"])
    ids, labels = b["input_ids"].reshape(-1), b["labels"].reshape(-1)
    np.testing.assert_array_equal(b["cu_seqlens_host"], cu)
    assert cup[0] == 0 and cup[-1] == ids.size
    np.testing.assert_array_equal(b["seq_idx"].reshape(-1),
                                  np.repeat(np.arange(len(cup) - 1), np.diff(cup)))
    assert b["max_seqlen"] == int(np.diff(cup).max())
    for k in range(len(cu) - 1):
        real, room = cu[k + 1] - cu[k], cup[k + 1] - cup[k]
        assert room % m == 0 and 0 <= room - real < m, (real, room)
        assert np.all(labels[cup[k] + real:cup[k + 1]] == -100), "padding is trained"
    return cup


def test_an_epoch_serves_every_token_once_with_padding_and_a_row_cap(corpus):
    """Every option on: each row's pieces are where provenance says, with the document's own
    tokens and labels; at most 3 per row. Over the epoch no token comes twice and none of the
    next epoch's documents is drawn, and the pre-counted steps count the padding and the cap: what
    the epoch leaves (its last rows that make no whole batch) is under one batch, so every other
    token of the epoch's documents is served."""
    paths, docs = corpus
    m, cap = 8, 3
    loader = open_stream(paths, pad_each_document_to=m, max_documents_per_row=cap, seq_idx=True,
                         provenance=True)
    steps = len(loader)
    plain = open_stream(paths)
    assert steps > len(plain) > 10, "padding and the cap cost rows: more steps"
    plain.close()
    cover = {key: np.zeros(len(t), np.int32) for key, t in docs.items()}
    n = 0
    for batch in loader:
        b = copied(batch)
        cup = check_padded_layout(b, m)
        starts = set(cup.tolist())
        for r, row in enumerate(b["provenance"]):
            assert 0 < len(row) <= cap
            ids, labels = b["input_ids"][r], b["labels"][r]
            for p in row:
                assert p["stream_epoch"] == 0, "the epoch drew on the next epoch's documents"
                tokens = docs[(p["source"], p["byte_offset"])]
                at, off, length = p["row_offset"], p["offset"], p["length"]
                assert r * SEQ + at in starts, "row_offset is the padded offset"
                np.testing.assert_array_equal(ids[at:at + length], tokens[off:off + length])
                np.testing.assert_array_equal(labels[at:at + length - 1],
                                              tokens[off + 1:off + length])
                cover[(p["source"], p["byte_offset"])][off:off + length] += 1
        n += 1
    loader.close()
    assert n == steps
    twice = sum(int((c > 1).sum()) for c in cover.values())
    missing = sum(int((c == 0).sum()) for c in cover.values())
    assert twice == 0, f"{twice} tokens served twice"
    assert missing <= (BATCH - 1) * SEQ, f"{missing} tokens never served"


@pytest.mark.parametrize("pack", ["bestfit", "pad"])
@pytest.mark.parametrize("cp,layout", [(2, "zigzag"), (4, "zigzag"), (2, "contiguous")])
def test_cp_ranks_of_each_dp_rank_gather_back_its_batch(corpus, pack, cp, layout):
    """DP world 2: the cp ranks of DP rank d read DP rank d's stream (rank=d) and keep their
    share; gathered by the documented layout they give back that rank's whole batch."""
    paths, _ = corpus
    m = (2 if layout == "zigzag" else 1) * cp * 2
    for dp in range(2):
        kw = dict(pack=pack, seq_idx=True, rank=dp, world_size=2, pad_each_document_to=m)
        whole = [copied(b) for b in open_stream(paths, **kw)]
        shares = [[copied(b) for b in open_stream(paths, context_parallel=(cp, r),
                                                  cp_layout=layout, **kw)] for r in range(cp)]
        assert len(whole) > 3 and all(len(s) == len(whole) for s in shares)
        for step, full in enumerate(whole):
            check_padded_layout(full, m)
            for r in range(cp):
                part = shares[r][step]
                assert part["max_seqlen"] == full["max_seqlen"]
                np.testing.assert_array_equal(part["cu_seqlens_host"], full["cu_seqlens"])
                check_share(full, part, cp, r, layout)


def test_te_1930_odd_documents_keep_every_token_with_cp2(corpus):
    """TransformerEngine #1930: with cp=2 a document of odd length lost its last token. Here the
    padding is implied (2 * cp = 4): gathered, the two shares hold every token of every piece,
    where the provenance of the same stream without CP says it is."""
    paths, docs = corpus
    whole = [copied(b) for b in open_stream(paths, pad_each_document_to=4, provenance=True)]
    shares = [[copied(b) for b in open_stream(paths, context_parallel=(2, r))] for r in range(2)]
    assert len(whole) == len(shares[0]) == len(shares[1]) > 10
    odd = 0
    for full, a, b in zip(whole, *shares):
        cup = a["cu_seqlens_padded"]
        np.testing.assert_array_equal(cup, full["cu_seqlens_padded"])
        flat = np.full(BATCH * SEQ, -1, np.int64)
        for r, part in enumerate((a, b)):
            flat[share_positions(cup, 2, r, "zigzag")] = part["input_ids"].reshape(-1)
        for r, row in enumerate(full["provenance"]):
            for p in row:
                tokens = docs[(p["source"], p["byte_offset"])]
                at, off, length = r * SEQ + p["row_offset"], p["offset"], p["length"]
                np.testing.assert_array_equal(flat[at:at + length], tokens[off:off + length])
                odd += length % 2
    assert odd > 10, "odd-length pieces were tested"


@pytest.mark.parametrize("extra", [dict(context_parallel=(2, 1), max_documents_per_row=4),
                                   dict(flex_block_mask=(16, "causal"), pad_each_document_to=8),
                                   dict(pack="pad", pad_each_document_to=16)])
def test_resume_is_bit_exact_with_every_option_on(corpus, extra):
    paths, _ = corpus
    kw = dict(seq_idx=True, **extra)
    full = [copied(b) for b in open_stream(paths, **kw)]
    for k in (3, 11):
        first = open_stream(paths, **kw)
        it = iter(first)
        for _ in range(k):
            next(it)
        state = json.loads(json.dumps(first.state_dict()))
        first.close()
        resumed = open_stream(paths, num_workers=3, **kw)
        resumed.load_state_dict(state)
        got = [copied(b) for b in resumed]
        assert len(got) == len(full) - k > 0
        for a, b in zip(full[k:], got):
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(np.asarray(a[key]), np.asarray(b[key]), key)
    # A state of another padding is refused, naming it.
    other = open_stream(paths, seq_idx=True, pack=extra.get("pack", "bestfit"))
    with pytest.raises(ValueError, match="pad_each_document_to|fingerprint|options"):
        other.load_state_dict(state)


def test_host_metadata_agree_with_the_torch_tensors(corpus):
    """output='torch' (CPU): host cu_seqlens, cu_seqlens_padded and max_seqlen are the tensors'
    values, seq_idx follows cu_seqlens_padded, with padding and a fixed cu_seqlens capacity."""
    paths, _ = corpus
    with open_stream(paths, output="torch", seq_idx=True, pad_each_document_to=8,
                     max_documents_per_row=4) as loader:
        for n, batch in enumerate(loader):
            cu, cup = batch["cu_seqlens"], batch["cu_seqlens_padded"]
            assert isinstance(cu, torch.Tensor) and cu.dtype == torch.int32
            assert cu.numel() == BATCH * (4 + 1) + 1  # fixed: rows' documents and a pad run
            torch.testing.assert_close(torch.as_tensor(np.asarray(batch.cu_seqlens_host)), cu)
            torch.testing.assert_close(
                torch.as_tensor(np.asarray(batch.cu_seqlens_padded_host)), cup)
            assert batch.max_seqlen == int((cup[1:] - cup[:-1]).max())
            want = torch.repeat_interleave(torch.arange(cup.numel() - 1, dtype=torch.int32),
                                           (cup[1:] - cup[:-1]).long())
            torch.testing.assert_close(batch["seq_idx"].reshape(-1), want)
            if n == 20:
                break


def test_a_chat_stream_with_padding_and_cp(chat_source, chat_dataset):  # noqa: F811
    """Chat records (a Qwen template, pack's default train_on): each CP rank's share gathers back
    the whole padded batch; every conversation of it is a packed document with that document's
    labels, padding untrained (loss_mask 0), no conversation twice."""
    jsonl, model = chat_source
    _, docs = chat_dataset
    by_tokens = {tuple(d["tokens"]): d for d in docs}
    seq = 320

    def load(**kw):
        stream = stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=16)
        with stoker.Loader(stream, seq_len=seq, batch_size=2, pack="bestfit", output="numpy",
                           num_workers=2, seq_idx=True, pad_each_document_to=4, **kw) as loader:
            return [copied(b) for b in loader]

    whole = load()
    shares = [load(context_parallel=(2, r)) for r in range(2)]
    seen = []
    for step, full in enumerate(whole):
        cu, cup = full["cu_seqlens"], check_padded_layout(full, 4)
        for r in range(2):
            check_share(full, shares[r][step], 2, r, "zigzag",
                        ("input_ids", "labels", "loss_mask", "seq_idx"))
        ids, labels = full["input_ids"].reshape(-1), full["labels"].reshape(-1)
        mask = full["loss_mask"].reshape(-1)
        assert np.all(mask[labels == -100] == 0) and np.all(mask[labels != -100] == 1)
        for k in range(len(cu) - 1):
            real = cu[k + 1] - cu[k]
            tokens = tuple(ids[cup[k]:cup[k] + real].tolist())
            if tokens not in by_tokens:
                assert not np.any(mask[cup[k]:cup[k + 1]]), "a trained run that is no document"
                continue
            d = by_tokens[tokens]
            want = [t if d["loss_mask"][i + 1] else -100
                    for i, t in enumerate(d["tokens"][1:])] + [-100]
            np.testing.assert_array_equal(labels[cup[k]:cup[k] + real], want)
            seen.append(tokens)
    assert len(seen) == len(set(seen)) and len(seen) >= 0.7 * len(docs)


def test_elastic_resume_with_padding_and_a_row_cap_repeats_no_token(corpus):
    """States of 2 ranks resumed on 3, padding and the cap on: every new rank takes the same
    steps, and over the epoch no token comes twice (test_stream_elastic.py's check)."""
    from test_stream_elastic import take, token_counts

    paths, docs = corpus
    kw = dict(pad_each_document_to=8, max_documents_per_row=3, provenance=True)
    old = [open_stream(paths, rank=r, world_size=2, **kw) for r in range(2)]
    cover = {}
    for loader in old:
        assert take(loader, 7, cover) == 7
    states = [loader.state_dict() for loader in old]
    for loader in old:
        loader.close()
    new = [open_stream(paths, rank=r, world_size=3, **kw) for r in range(3)]
    for loader in new:
        loader.load_state_dict(states)
    left = {len(loader) for loader in new}
    assert len(left) == 1
    taken = [take(loader, 10 ** 9, cover) for loader in new]
    assert len(set(taken)) == 1 and taken[0] == left.pop() - 7 > 0
    twice, tokens = token_counts(cover)
    assert twice == 0, f"{twice} tokens delivered twice"
    assert tokens >= 0.85 * sum(len(t) for t in docs.values())
    for loader in new:
        loader.close()
