"""stoker.integrations.olmo_core against the real ai2-olmo-core 3.0.0 on CPU: two ranks over gloo
make OLMo-core's Trainer calls (reshuffle(epoch), iteration, reset(), per-rank train state files,
rank 0's file on another world size); a run killed with SIGKILL resumes on exactly the
uninterrupted run's tokens, a resume on three ranks trains each row of the epoch once, and the
batches carry doc_lens/max_doc_lens and label_mask as OLMo-core's model and train module read
them."""

import pytest
import torch

import stoker
from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 read_steps, require_releases, runner)

SEQ = 64

data_loader_module = pytest.importorskip("olmo_core.data.data_loader")
require_releases(ai2_olmo_core="3.0.0")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("olmo-data"), documents=40)


def test_kill_9_and_resume_trains_the_uninterrupted_runs_tokens(data, tmp_path):
    run = runner("dp_loop_worker.py", data, SEQ, "olmo_core")
    check_kill_9_resume(run, data, SEQ, tmp_path)
    steps = read_steps(tmp_path / "log-b1", 2)
    assert all(rec["doc_lens_ok"] for recs in steps.values() for rec in recs)


def test_resume_on_three_ranks_trains_each_row_of_the_epoch_once(data, tmp_path):
    run = runner("dp_loop_worker.py", data, SEQ, "olmo_core")
    check_elastic_resume(run, data, SEQ, tmp_path, old=2, new=3)


def make(data, tmp_path, **kw):
    from stoker.integrations.olmo_core import StokerDataLoader

    loader = stoker.Loader(str(data), seq_len=SEQ, batch_size=2, rank=0, world_size=1,
                           num_workers=1, output="torch")
    return StokerDataLoader(loader, work_dir=str(tmp_path), **kw)


def test_batches_in_olmo_cores_layout(data, tmp_path):
    from olmo_core.data.utils import get_cumulative_document_lengths, get_labels

    dl = make(data, tmp_path, vocab_size=257)
    assert isinstance(dl, data_loader_module.DataLoaderBase)
    assert dl.global_batch_size == 2 * SEQ and dl.rank_batch_size == 2 * SEQ
    dl.reshuffle(epoch=1)
    for batch in dl:
        ids, labels = batch["input_ids"], batch["labels"]
        # OLMo-core's own labels from input_ids and label_mask are stoker's, but for the last
        # column (a split document's next token, which only stoker knows).
        theirs = get_labels({"input_ids": ids, "label_mask": batch["label_mask"]})
        assert torch.equal(theirs[:, :-1], labels[:, :-1])
        cu = get_cumulative_document_lengths(batch["doc_lens"])
        assert int(cu[-1]) == ids.numel()
        assert batch["max_doc_lens"] == batch["doc_lens"].max(dim=1).values.tolist()
        # Each document span starts at position 0.
        starts = cu[:-1].long()
        assert bool((batch_positions(ids.shape, cu)[starts] == 0).all())
        break
    mock = dl.get_mock_batch()
    assert mock["input_ids"].shape == (2, SEQ) and int(mock["doc_lens"].sum()) == 2 * SEQ


def batch_positions(shape, cu):
    pos = torch.arange(shape[0] * shape[1])
    seg = torch.searchsorted(cu, pos, right=True) - 1
    return pos - cu[seg]


def test_reshuffle_keeps_a_resumed_epoch_and_state_round_trips(data, tmp_path):
    dl = make(data, tmp_path)
    dl.reshuffle(epoch=1)
    it = iter(dl)
    for _ in range(3):
        next(it)
    state = dl.state_dict()
    expected = next(it)["input_ids"].clone()
    other = make(data, tmp_path)
    other.load_state_dict(state)
    other.reshuffle(epoch=1)  # OLMo-core calls it after loading: the loader stays put
    assert other.batches_processed == 3
    assert torch.equal(next(iter(other))["input_ids"], expected)


def test_what_cannot_be_honoured_is_refused(data, tmp_path):
    with pytest.raises(ValueError, match="rank 0 of 1 and OLMo-core's data-parallel rank is 1"):
        make(data, tmp_path, dp_world_size=2, dp_rank=1)
    with pytest.raises(ValueError, match="has 100 embedding rows"):
        make(data, tmp_path, vocab_size=100)
    dl = make(data, tmp_path)
    with pytest.raises(ValueError, match="written with another data loader"):
        dl.load_state_dict({"dataset_fingerprint": "x", "batches_processed": 3})
