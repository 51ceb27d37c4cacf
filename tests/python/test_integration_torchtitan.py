"""stoker.integrations.torchtitan against the real torchtitan 0.3.0 on CPU: two ranks over gloo
build the dataloader as torchtitan's Trainer does (its Config's build()) and checkpoint it with
torchtitan's own CheckpointManager (DCP); a run killed with SIGKILL resumes on exactly the
uninterrupted run's tokens, and a resume on three ranks trains each row of the epoch once.
Beside it, torchtitan's own ParallelAwareDataloader refuses the same change of DP degree."""

import pytest

from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 read_steps, require_releases, runner)

SEQ = 64

torchtitan_dataloader = pytest.importorskip("torchtitan.components.dataloader")
require_releases(torchtitan="0.3.0")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("titan-data"), documents=40)


def test_kill_9_and_resume_trains_the_uninterrupted_runs_tokens(data, tmp_path):
    run = runner("dp_loop_worker.py", data, SEQ, "torchtitan")
    check_kill_9_resume(run, data, SEQ, tmp_path)
    steps = read_steps(tmp_path / "log-b1", 2)
    assert any(rec["positions_restart"] for recs in steps.values() for rec in recs)


def test_resume_on_three_ranks_trains_each_row_of_the_epoch_once(data, tmp_path):
    run = runner("dp_loop_worker.py", data, SEQ, "torchtitan")
    check_elastic_resume(run, data, SEQ, tmp_path, old=2, new=3)


def test_torchtitans_own_dataloader_refuses_another_dp_degree():
    import torch

    class Rows(torch.utils.data.IterableDataset):
        def __iter__(self):
            for i in range(100):
                yield {"input": torch.tensor([i])}, torch.tensor([i])

    old = torchtitan_dataloader.ParallelAwareDataloader(Rows(), dp_rank=0, dp_world_size=2,
                                                        batch_size=2)
    it = iter(old)
    next(it)
    state = old.state_dict()
    new = torchtitan_dataloader.ParallelAwareDataloader(Rows(), dp_rank=0, dp_world_size=3,
                                                        batch_size=2)
    with pytest.raises(AssertionError, match="dataloader resharding is not supported"):
        new.load_state_dict(state)


def test_a_checkpoint_of_another_dataloader_is_refused(data):
    from stoker.integrations.torchtitan import StokerDataLoader

    loader = StokerDataLoader.Config(datasets=[str(data)], num_workers=1).build(
        dp_world_size=1, dp_rank=0, tokenizer=None, seq_len=SEQ, local_batch_size=2)
    loader.load_state_dict({})  # a fresh run: torchtitan loads nothing
    with pytest.raises(ValueError, match="not stoker's.*written with another loader"):
        loader.load_state_dict({"dp_rank_0": b"...", "world_size": 2})


def test_a_tokenizer_of_another_vocabulary_is_refused(data):
    from stoker.integrations.torchtitan import StokerDataLoader

    class Tokenizer:
        eos_id = 2

        def get_vocab_size(self):
            return 128256

    with pytest.raises(ValueError, match="vocabulary of 128256 tokens"):
        StokerDataLoader.Config(datasets=[str(data)], num_workers=1).build(
            dp_world_size=1, dp_rank=0, tokenizer=Tokenizer(), seq_len=SEQ, local_batch_size=2)
