"""stoker.integrations.megatron against the real megatron-core 0.16.1 on CPU: two ranks over gloo
read StokerGPTDataset (built by BlendedMegatronDatasetBuilder) in the index pattern of Megatron's
pretraining sampler, or the external iterator; the checkpoint holds only what Megatron's does for
data (iteration, consumed_train_samples). A run killed with SIGKILL resumes on exactly the
uninterrupted run's tokens, and a resume on three ranks trains each row of the epoch once."""

import pytest
import torch

import stoker
from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 require_releases, runner)

SEQ = 64

builder = pytest.importorskip("megatron.core.datasets.blended_megatron_dataset_builder")
require_releases(megatron_core="0.16.1")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("megatron-data"), documents=40)


@pytest.mark.parametrize("mode", ["megatron_dataset", "megatron_iterator"])
def test_kill_9_and_resume_trains_the_uninterrupted_runs_tokens(mode, data, tmp_path):
    run = runner("dp_loop_worker.py", data, SEQ, mode)
    check_kill_9_resume(run, data, SEQ, tmp_path)


def test_resume_on_three_ranks_trains_each_row_of_the_epoch_once(data, tmp_path):
    # The dataset route (the iterator seeks the same way: seek(consumed_samples)).
    run = runner("dp_loop_worker.py", data, SEQ, "megatron_dataset")
    check_elastic_resume(run, data, SEQ, tmp_path, old=2, new=3)


def config(data, **kw):
    from megatron.core.tokenizers.text.libraries.null_tokenizer import NullTokenizer

    from stoker.integrations.megatron import StokerGPTDatasetConfig

    kw.setdefault("blend", ([str(data)], None))
    kw.setdefault("split", "100,0,0")
    kw.setdefault("sequence_length", SEQ)
    return StokerGPTDatasetConfig(random_seed=0, tokenizer=NullTokenizer(256),
                                  reset_position_ids=True, reset_attention_mask=True,
                                  eod_mask_loss=False, micro_batch_size=2, num_workers=1, **kw)


def test_samples_have_gpt_datasets_keys_and_a_block_causal_mask(data):
    from stoker.integrations.megatron import StokerGPTDataset

    ds, _, _ = builder.BlendedMegatronDatasetBuilder(StokerGPTDataset, [8, None, None],
                                                     lambda: True, config(data)).build()
    sample = ds[0]
    assert set(sample) == {"tokens", "labels", "loss_mask", "position_ids", "attention_mask",
                           "cu_seqlens", "cu_seqlens_argmin", "cu_seqlens_unpadded",
                           "cu_seqlens_unpadded_argmin", "max_seqlen"}
    ref = next(iter(stoker.Loader(str(data), seq_len=SEQ, batch_size=2, rank=0, world_size=1,
                                  num_workers=1)))
    assert torch.equal(sample["tokens"], ref["input_ids"][0])
    assert torch.equal(sample["position_ids"], ref["position_ids"][0])
    trained = ref["labels"][0] != -100
    assert torch.equal(sample["loss_mask"] > 0, trained)
    assert torch.equal(sample["labels"][trained], ref["labels"][0][trained])
    mask = sample["attention_mask"][0]  # True = masked, as Megatron's
    seg = ref["segment_ids"][0]
    i, j = 10, 5
    assert bool(mask[i, j]) == (seg[i] != seg[j])
    assert bool(mask[j, i])  # causal


def row_boundaries(pieces, seq_len):
    """A row's segment boundaries from its provenance: each document piece, and the padding
    run after the last one (stoker's cu_seqlens has a segment for it too)."""
    cuts = [0]
    for piece in sorted(pieces, key=lambda p: p["row_offset"]):
        assert piece["row_offset"] == cuts[-1]
        cuts.append(piece["row_offset"] + piece["length"])
    if cuts[-1] < seq_len:
        cuts.append(seq_len)
    return cuts


def test_packed_sequence_fields_are_the_rows_documents_and_megatron_builds_thd_params(data):
    from megatron.core.datasets.data_schedule import HybridCPDataLoaderWrapper
    from megatron.core.utils import get_thd_batch_on_this_cp_rank

    from stoker.integrations.megatron import StokerGPTDataset, StokerMegatronIterator

    LONG = 512  # rows of several documents each

    ds, _, _ = builder.BlendedMegatronDatasetBuilder(
        StokerGPTDataset, [8, None, None], lambda: True,
        config(data, sequence_length=LONG)).build()
    ref = next(iter(stoker.Loader(str(data), seq_len=LONG, batch_size=2, rank=0, world_size=1,
                                  num_workers=1, provenance=True)))
    samples = [ds[0], ds[1]]
    for row, sample in enumerate(samples):
        cuts = row_boundaries(ref["provenance"][row], LONG)
        assert len(cuts) > 2  # a row of several documents: the test means something
        cu, end = sample["cu_seqlens"], int(sample["cu_seqlens_argmin"])
        assert cu.dtype == torch.int32 and cu.shape == (LONG + 1,)
        assert sample["max_seqlen"].dtype == torch.int32 and sample["max_seqlen"].shape == (1,)
        assert cu[:end].tolist() == cuts and bool((cu[end:] == LONG).all())
        assert torch.equal(sample["cu_seqlens_unpadded"], cu)
        assert int(sample["cu_seqlens_unpadded_argmin"]) == end
        assert int(sample["max_seqlen"]) == max(b - a for a, b in zip(cuts, cuts[1:]))
        # Each document piece of the row, as megatron-core's hybrid-CP wrapper unpacks it.
        subs = HybridCPDataLoaderWrapper.unpack_batch(None, [sample])
        assert len(subs) == len(cuts) - 1
        for sub, a, b in zip(subs, cuts, cuts[1:]):
            assert torch.equal(sub["tokens"], ref["input_ids"][row][a:b])

    # Megatron's collate, then its THD path for one micro-batch row (micro batch 1 for THD).
    batch = torch.utils.data.default_collate(samples)
    row = {k: v[0:1] for k, v in batch.items() if k in ("tokens", "labels", "loss_mask",
                                                         "position_ids")}
    end = int(batch["cu_seqlens_argmin"][0])
    out, params = get_thd_batch_on_this_cp_rank(
        row, batch["cu_seqlens_unpadded"][0][:end], batch["cu_seqlens"][0][:end],
        batch["max_seqlen"][0], cp_size=1, cp_rank=0)
    assert params.qkv_format == "thd"
    assert params.cu_seqlens_q.tolist() == row_boundaries(ref["provenance"][0], LONG)
    assert params.max_seqlen_q == int(samples[0]["max_seqlen"])
    assert torch.equal(out["tokens"], samples[0]["tokens"][None])

    # The external iterator gives the same fields for its micro-batch; packed_sequence=False none.
    it = StokerMegatronIterator(stoker.Loader(str(data), seq_len=LONG, batch_size=2, num_workers=1,
                                              output="torch"))
    micro = next(it)
    assert torch.equal(micro["cu_seqlens"], batch["cu_seqlens"])
    assert torch.equal(micro["max_seqlen"], batch["max_seqlen"])
    plain = StokerMegatronIterator(stoker.Loader(str(data), seq_len=LONG, batch_size=2,
                                                 num_workers=1, output="torch"),
                                   packed_sequence=False)
    assert "cu_seqlens" not in next(plain)


def test_what_cannot_be_honoured_is_refused(data, tmp_path):
    from stoker.integrations.megatron import StokerGPTDataset

    other = make_text_dataset(tmp_path / "other", documents=10)
    with pytest.raises(ValueError, match="one stoker dataset or mixture file per blend"):
        builder.BlendedMegatronDatasetBuilder(
            StokerGPTDataset, [8, None, None], lambda: True,
            config(data, blend=([str(data), str(other)], None))).build()
    with pytest.raises(ValueError, match="cannot be split by documents"):
        builder.BlendedMegatronDatasetBuilder(
            StokerGPTDataset, [8, 8, None], lambda: True, config(data, split="50,50,0")).build()
