"""One rank of a Lightning or LitGPT-shaped Fabric run (tests/python/test_integration_lightning.py
launches it with torchrun over gloo).

``trainer``: lightning.Trainer(strategy="ddp") fits a tiny model on StokerDataModule, saving a
checkpoint every 2 steps, and resumes with ``fit(ckpt_path=...)``.
``litgpt``: the Fabric calls of ``litgpt pretrain``'s main() and fit() (its own entry point
compiles the model and shards it with FSDP, which this CPU test does not): StokerLitData
connected to a tiny LitGPT GPT, ``fabric.setup_dataloaders``, a state dict holding
``train_dataloader``, ``fabric.save``/``fabric.load``, CycleIterator, inputs ``[:, :-1]`` and
targets ``[:, 1:]``.
Each step's row hashes go to HASHES/steps-rank{RANK}.jsonl; ``--kill-at K`` sends SIGKILL to the
process when step K ends.
"""

import argparse
import os
import signal
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

from integration_testlib import StepLog, worker_arguments


def tiny_model(vocab):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(vocab, 32), torch.nn.Linear(32, 32),
                               torch.nn.GELU(), torch.nn.Linear(32, vocab))


def run_trainer(args, rank, log):
    import lightning as L
    from lightning.pytorch.callbacks import Callback, ModelCheckpoint

    from stoker.integrations.lightning import StokerDataModule

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = tiny_model(257)

        def training_step(self, batch, batch_idx):
            log.write(self.global_step + 1, batch["input_ids"])
            logits = self.net(batch["input_ids"])
            return F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(),
                                   ignore_index=-100)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class KillAt(Callback):
        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            if args.kill_at and trainer.global_step == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    world = int(os.environ["WORLD_SIZE"])
    data = StokerDataModule(args.data, seq_len=args.seq_len,
                            batch_size=args.global_rows // world, num_workers=1)
    ckpt = ModelCheckpoint(dirpath=args.out, every_n_train_steps=2, save_top_k=-1,
                           filename="{step}")
    trainer = L.Trainer(accelerator="cpu", devices=world, strategy="ddp", max_steps=args.steps,
                        callbacks=[ckpt, KillAt()], logger=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0,
                        use_distributed_sampler=True)
    resume = None
    if args.resume:
        resume = max(Path(args.out).glob("step=*.ckpt"),
                     key=lambda p: int(p.stem.split("=")[1]))
    trainer.fit(Module(), datamodule=data, ckpt_path=resume)


def run_litgpt(args, rank, log):
    import lightning as L
    from litgpt.config import Config
    from litgpt.model import GPT
    from litgpt.utils import CycleIterator, chunked_cross_entropy

    from stoker.integrations.lightning import StokerLitData

    world = int(os.environ["WORLD_SIZE"])
    fabric = L.Fabric(accelerator="cpu", devices=world, strategy="ddp", precision="32-true")
    fabric.launch()
    fabric.seed_everything(0)
    config = Config(block_size=args.seq_len, vocab_size=257, padded_vocab_size=257, n_layer=2,
                    n_head=2, n_embd=32, rotary_percentage=1.0)
    model = fabric.setup(GPT(config))
    optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
    # litgpt.pretrain.get_dataloaders
    data = StokerLitData(args.data, num_workers=1)
    data.connect(tokenizer=None, batch_size=args.global_rows // world,
                 max_seq_length=args.seq_len)
    data.setup()
    train_dataloader = fabric.setup_dataloaders(data.train_dataloader())
    state = {"model": model, "optimizer": optimizer, "train_dataloader": train_dataloader,
             "iter_num": 0, "step_count": 0}
    if args.resume:
        last = max(Path(args.out).glob("step-*/lit_model.pth"), key=lambda p: p.parent.name)
        fabric.load(last, state)
    # litgpt.pretrain.fit
    for train_data in CycleIterator(train_dataloader):
        if state["iter_num"] >= args.steps:
            break
        state["iter_num"] += 1
        input_ids = train_data[:, 0:args.seq_len].contiguous().long()
        targets = train_data[:, 1:(args.seq_len + 1)].contiguous().long()
        log.write(state["iter_num"], input_ids)
        loss = chunked_cross_entropy(model(input_ids), targets)
        fabric.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        state["step_count"] += 1
        if state["step_count"] % 2 == 0:
            fabric.save(Path(args.out) / f"step-{state['step_count']:08d}" / "lit_model.pth",
                        state)
        if args.kill_at and state["step_count"] == args.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["trainer", "litgpt"])
    args = worker_arguments(p).parse_args()
    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    log = StepLog(args.hashes, rank)
    (run_trainer if args.mode == "trainer" else run_litgpt)(args, rank, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
