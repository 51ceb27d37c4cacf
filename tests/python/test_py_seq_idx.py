"""seq_idx (LoaderOptions::seq_idx, one row of the loader's option table): int32 [B, S], each
token's index among the batch's cu_seqlens segments, on real packed batches of a packed dataset
and of a stream, from Python and the CLI."""

import numpy as np
import pytest

import stoker

CORPUS = "data/sample/corpus.jsonl"
SEQ, BATCH = 96, 4


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    out = tmp_path_factory.mktemp("seq_idx") / "ds"
    stoker.pack(CORPUS, out, "bytes", num_workers=2)
    return str(out)


def copied(batch):
    """The batch's arrays copied out of the ring (a batch holds its ring slot while they live)."""
    return {k: v.copy() for k, v in batch.items()}


def check_seq_idx(batch):
    """seq_idx against cu_seqlens: segment k covers the flattened positions [cu[k], cu[k+1])."""
    cu = np.asarray(batch["cu_seqlens"])
    seq_idx = np.asarray(batch["seq_idx"])
    B, S = np.asarray(batch["input_ids"]).shape
    assert seq_idx.dtype == np.int32 and seq_idx.shape == (B, S)
    assert cu[0] == 0 and cu[-1] == B * S
    expected = np.repeat(np.arange(len(cu) - 1, dtype=np.int32), np.diff(cu))
    np.testing.assert_array_equal(seq_idx.reshape(-1), expected)
    flat = seq_idx.reshape(-1)
    assert flat[0] == 0 and np.all(np.diff(flat) >= 0) and np.all(np.diff(flat) <= 1)
    return len(cu) - 1


@pytest.mark.parametrize("pack", ["concat", "bestfit", "pad"])
def test_seq_idx_follows_cu_seqlens(packed, pack):
    kw = dict(seq_len=SEQ, batch_size=BATCH, pack=pack, seed=3, num_workers=2, output="numpy")
    plain = [copied(b) for b in stoker.Loader(packed, **kw)]
    with stoker.Loader(packed, seq_idx=True, **kw) as loader:
        segments = 0
        for n, batch in enumerate(loader):
            assert set(batch) == set(plain[n]) | {"seq_idx"}
            for key in plain[n]:  # the other tensors do not change
                np.testing.assert_array_equal(batch[key], plain[n][key])
            segments = max(segments, check_seq_idx(batch))
    assert n + 1 == len(plain) > 3
    assert segments > BATCH  # rows hold several documents (concat) or padding runs
    assert "seq_idx" not in plain[0]


def test_seq_idx_of_a_stream_and_int32_tokens():
    stream = stoker.Stream(CORPUS, shuffle_buffer=32, steps_per_epoch=6)
    loader = stoker.Loader(stream, seq_len=SEQ, batch_size=2, pack="bestfit", seq_idx=True,
                           token_dtype="int32", num_workers=2, output="numpy")
    batches = [copied(b) for b in loader]
    assert len(batches) == 6
    for batch in batches:
        check_seq_idx(batch)


def test_seq_idx_is_a_bench_flag(packed, run_stoker):
    p = run_stoker("bench", packed, "--seq-len", SEQ, "--batch-size", BATCH, "--seq-idx",
                   "--token-dtype", "int32", "--batches", 3, "--num-workers", 1)
    assert p.returncode == 0, p.stderr
    # The run's description names the loader flags that differ from the defaults.
    assert "--token-dtype int32 --seq-idx" in p.stdout.splitlines()[0]
