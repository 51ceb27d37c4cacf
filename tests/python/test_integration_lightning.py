"""stoker.integrations.lightning against the real lightning 2.6.6 and litgpt 0.5.13 on CPU, two
ranks over gloo under torchrun: Lightning's Trainer saves the loader in its own checkpoints and
a run killed with SIGKILL resumes on exactly the uninterrupted run's tokens; a resume on three
ranks serves the rest of the epoch once; LitGPT's pretraining calls (StokerLitData, Fabric's
save/load of ``train_dataloader``) do the same. Beside it, Lightning's own DataLoader restarts
the interrupted epoch from its first batch (the repeated data of litgpt #1712)."""

import pytest

import stoker
from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 require_releases, runner)

SEQ = 64

lightning = pytest.importorskip("lightning")
require_releases(lightning="2.6.6", litgpt="0.5.13")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("lightning-data"), documents=40)


@pytest.mark.parametrize("mode", ["trainer", "litgpt"])
def test_kill_9_and_resume_trains_the_uninterrupted_runs_tokens(mode, data, tmp_path):
    run = runner("lightning_worker.py", data, SEQ, mode, use_torchrun=True)
    check_kill_9_resume(run, data, SEQ, tmp_path)


def test_trainer_resume_on_three_ranks_trains_each_row_of_the_epoch_once(data, tmp_path):
    run = runner("lightning_worker.py", data, SEQ, "trainer", use_torchrun=True)
    check_elastic_resume(run, data, SEQ, tmp_path, old=2, new=3)


# -- in one process ------------------------------------------------------------------------------


def test_lightning_saves_and_restores_the_loader_and_its_own_loader_restarts(data, tmp_path):
    """Two steps, a checkpoint, a new Trainer resumed from it: the stoker loader continues at
    batch 3; a plain DataLoader (Lightning's own path) serves batches 1 and 2 again."""
    import torch
    import torch.nn.functional as F
    from lightning.pytorch.callbacks import ModelCheckpoint

    from stoker.integrations.lightning import StokerDataLoader

    seen = []

    class Module(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            ids = batch["input_ids"] if isinstance(batch, dict) else batch
            seen.append(ids.clone())
            return F.mse_loss(self.net(ids[:, :4].float()), torch.zeros(len(ids), 1))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    def fit(loader, out, steps, ckpt=None):
        seen.clear()
        trainer = lightning.Trainer(accelerator="cpu", devices=1, max_steps=steps, logger=False,
                                    enable_progress_bar=False, enable_model_summary=False,
                                    callbacks=[ModelCheckpoint(dirpath=out, every_n_train_steps=2,
                                                               save_top_k=-1,
                                                               filename="{step}")])
        trainer.fit(Module(), train_dataloaders=loader, ckpt_path=ckpt)
        return list(seen)

    def stoker_loader():
        return StokerDataLoader(stoker.Loader(str(data), seq_len=SEQ, batch_size=2, rank=0,
                                              world_size=1, num_workers=1))

    full = fit(stoker_loader(), tmp_path / "s-full", 4)
    fit(stoker_loader(), tmp_path / "s", 2)
    resumed = fit(stoker_loader(), tmp_path / "s", 4, tmp_path / "s" / "step=2.ckpt")
    assert len(resumed) == 2
    assert all(torch.equal(x, y) for x, y in zip(resumed, full[2:]))

    rows = torch.cat([b["input_ids"].clone() for b in stoker_loader().loader])  # one epoch
    plain = lambda: torch.utils.data.DataLoader(rows, batch_size=2)  # noqa: E731
    full = fit(plain(), tmp_path / "p-full", 4)
    fit(plain(), tmp_path / "p", 2)
    resumed = fit(plain(), tmp_path / "p", 4, tmp_path / "p" / "step=2.ckpt")
    assert len(resumed) == 2
    assert torch.equal(resumed[0], full[0])  # the epoch again from its start: batches repeat
    assert not torch.equal(resumed[0], full[2])


def test_the_loaders_metrics_reach_the_trainers_loggers(data):
    """StokerMetricsCallback hands each window of Loader(metrics=stoker.metrics.Latest()) to
    trainer.loggers (a real Lightning Logger), at the stoker step it ended at."""
    import torch
    import torch.nn.functional as F
    from lightning.pytorch.loggers import Logger

    from stoker.integrations.lightning import StokerDataLoader, StokerMetricsCallback

    class Record(Logger):
        name, version = "record", 0
        got = []

        def log_metrics(self, metrics, step=None):
            self.got.append((step, dict(metrics)))

        def log_hyperparams(self, params, *args, **kwargs):
            pass

    class Module(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return F.mse_loss(self.net(batch["input_ids"][:, :4].float()),
                              torch.zeros(len(batch["input_ids"]), 1))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    windows = []
    loader = stoker.Loader(str(data), seq_len=SEQ, batch_size=2, rank=0, world_size=1,
                           num_workers=1, metrics_every=2,
                           metrics=[stoker.metrics.Latest(), lambda s, m: windows.append((s, m))])
    logger = Record()
    trainer = lightning.Trainer(accelerator="cpu", devices=1, max_steps=6, logger=logger,
                                enable_progress_bar=False, enable_model_summary=False,
                                enable_checkpointing=False,
                                callbacks=[StokerMetricsCallback(loader)])
    trainer.fit(Module(), train_dataloaders=StokerDataLoader(loader))
    ours = [(s, m) for s, m in logger.got if "stoker/tokens" in m]
    assert len(ours) >= 3 and ours == windows[:len(ours)]
    assert [s for s, _ in ours[:3]] == [1, 3, 5]


def test_litgpt_pretrain_rows_refuse_ignored_targets(data):
    from stoker.integrations.lightning import StokerLitData

    module = StokerLitData(str(data), cross_document_targets=False, num_workers=1)
    module.connect(batch_size=2, max_seq_length=SEQ)
    with pytest.raises(ValueError, match="litgpt pretrain takes targets = the next input token"):
        for _ in module.train_dataloader():  # the first row with a document end inside
            pass
    module.teardown()
    good = StokerLitData(str(data), num_workers=1)
    good.connect(batch_size=2, max_seq_length=SEQ)
    batch = next(iter(good.train_dataloader()))
    assert tuple(batch.shape) == (2, SEQ + 1)
    good.teardown()


def test_litgpt_tokenizer_of_another_vocabulary_is_refused(data):
    from stoker.integrations.lightning import StokerLitData

    class OtherTokenizer:
        vocab_size = 32000
        eos_id = 2

    module = StokerLitData(str(data), num_workers=1)
    module.connect(tokenizer=OtherTokenizer(), batch_size=2, max_seq_length=SEQ)
    with pytest.raises(ValueError, match="vocabulary of 32000 tokens.*packed with one of 257"):
        module.train_dataloader()
