"""stoker.integrations.megatron against the real megatron-core 0.16.1 on CPU: two ranks over gloo
read StokerGPTDataset (built by BlendedMegatronDatasetBuilder) in the index pattern of Megatron's
pretraining sampler, or the external iterator; the checkpoint holds only what Megatron's does for
data (iteration, consumed_train_samples). A run killed with SIGKILL resumes on exactly the
uninterrupted run's tokens, and a resume on three ranks trains each row of the epoch once."""

import pytest
import torch

import stoker
from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 runner)

SEQ = 64

builder = pytest.importorskip("megatron.core.datasets.blended_megatron_dataset_builder")


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
    return StokerGPTDatasetConfig(random_seed=0, sequence_length=SEQ, tokenizer=NullTokenizer(256),
                                  reset_position_ids=True, reset_attention_mask=True,
                                  eod_mask_loss=False, micro_batch_size=2, num_workers=1, **kw)


def test_samples_have_gpt_datasets_keys_and_a_block_causal_mask(data):
    from stoker.integrations.megatron import StokerGPTDataset

    ds, _, _ = builder.BlendedMegatronDatasetBuilder(StokerGPTDataset, [8, None, None],
                                                     lambda: True, config(data)).build()
    sample = ds[0]
    assert set(sample) == {"tokens", "labels", "loss_mask", "position_ids", "attention_mask"}
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
