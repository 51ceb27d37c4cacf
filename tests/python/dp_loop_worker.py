"""One rank of a training loop that makes the data and checkpoint calls of torchtitan's or
OLMo-core's trainer, or of Megatron-LM's pretraining (their own loops need a GPU, and
Megatron-LM's is not on PyPI), over gloo; launched by tests/python/test_integration_*.py.

``torchtitan``: ``StokerDataLoader.Config(...).build(dp_world_size=, dp_rank=, tokenizer=,
seq_len=, local_batch_size=, snapshot_every_n_steps=)`` as ``Trainer.__init__`` calls it; the
batches as ``Trainer.batch_generator`` and ``post_dataloading_process`` take them; torchtitan's
own ``CheckpointManager`` (DCP) saves and loads the dataloader with the model.
``olmo_core``: ``Trainer._fit_epoch``'s calls (``reshuffle(epoch)``, iteration, ``reset()``,
``global_num_tokens_in_batch``), and ``Trainer.state_dict()``'s ``data_loader`` entry saved per
rank as ``Checkpointer._save_train_state`` does (``train/rank{N}.pt``) and loaded as
``Checkpointer.load`` does (this rank's file, else rank 0's).
Each step's row hashes go to HASHES/steps-rank{RANK}.jsonl; ``--kill-at K``: SIGKILL after step K.
"""

import argparse
import os
import signal
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F

from integration_testlib import StepLog, worker_arguments


def tiny_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Embedding(257, 32), torch.nn.Linear(32, 257))


def train_step(model, opt, ids, labels):
    loss = F.cross_entropy(model(ids).flatten(0, 1), labels.flatten(), ignore_index=-100)
    loss.backward()
    opt.step()
    opt.zero_grad()


def run_torchtitan(args, rank, world, log):
    from torchtitan.components.checkpointer.dcp import CheckpointManager

    from stoker.integrations.torchtitan import StokerDataLoader

    class TrainState:  # torchtitan's Trainer is the "train_state" Stateful: its step
        step = 0

        def state_dict(self):
            return {"step": torch.tensor(self.step)}

        def load_state_dict(self, sd):
            self.step = int(sd["step"])

    class NoState:  # optimizer and scheduler containers: not what this test checks
        def state_dict(self):
            return {}

        def load_state_dict(self, sd):
            pass

    model = torch.nn.parallel.DistributedDataParallel(tiny_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    config = StokerDataLoader.Config(datasets=[args.data], num_workers=1)
    dataloader = config.build(dp_world_size=world, dp_rank=rank, tokenizer=None,
                              seq_len=args.seq_len, local_batch_size=args.global_rows // world,
                              snapshot_every_n_steps=2)
    state = TrainState()
    ckpt = CheckpointManager.Config(enable=True, folder="checkpoint", interval=2,
                                    last_save_model_only=False).build(
        dataloader=dataloader, model_parts=[model.module], optimizers=NoState(),
        lr_schedulers=NoState(), states={"train_state": state}, sd_adapter=None,
        base_folder=str(args.out))
    if args.resume:
        assert ckpt.load(step=-1), "no checkpoint loaded"
    data_iterator = iter(dataloader)
    while state.step < args.steps:
        state.step += 1
        input_dict, labels = next(data_iterator)
        log.write(state.step, input_dict["input"],
                  positions_restart=bool((input_dict["positions"] == 0).sum() > len(labels)))
        train_step(model, opt, input_dict["input"], labels)
        ckpt.save(curr_step=state.step, last_step=state.step == args.steps)
        if args.kill_at and state.step == args.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    ckpt.close()


def run_olmo_core(args, rank, world, log):
    import stoker
    from stoker.integrations.olmo_core import StokerDataLoader

    model = torch.nn.parallel.DistributedDataParallel(tiny_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = stoker.Loader(args.data, seq_len=args.seq_len, batch_size=args.global_rows // world,
                           num_workers=1, output="torch")
    data_loader = StokerDataLoader(loader, work_dir=str(args.out), dp_world_size=world,
                                   dp_rank=rank, vocab_size=257)
    global_step, epoch = 0, 1
    if args.resume:
        last = max(Path(args.out).glob("step*"), key=lambda p: int(p.name[4:]))
        for path in (last / "train" / f"rank{rank}.pt", last / "train" / "rank0.pt"):
            if path.exists():
                trainer_state = torch.load(path, weights_only=False)
                break
        data_loader.load_state_dict(trainer_state["data_loader"])
        global_step, epoch = trainer_state["global_step"], trainer_state["epoch"]
    while global_step < args.steps:  # Trainer.fit: epochs until done
        data_loader.reshuffle(epoch)
        for batch in data_loader:
            global_step += 1
            assert data_loader.global_num_tokens_in_batch(batch) == args.global_rows * args.seq_len
            doc_lens_ok = bool((batch["doc_lens"].sum(dim=1) == args.seq_len).all())
            log.write(global_step, batch["input_ids"], doc_lens_ok=doc_lens_ok)
            train_step(model, opt, batch["input_ids"], batch["labels"])
            if global_step % 2 == 0:
                state = {"global_step": global_step, "epoch": epoch,
                         "data_loader": data_loader.state_dict()}
                folder = Path(args.out) / f"step{global_step}" / "train"
                folder.mkdir(parents=True, exist_ok=True)
                torch.save(state, folder / f"rank{rank}.pt")
                dist.barrier()
            if args.kill_at and global_step == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            if global_step >= args.steps:
                break
        else:
            epoch += 1
            data_loader.reset()


def run_megatron(args, rank, world, log):
    """Megatron-LM's pretraining data path: a dataset from BlendedMegatronDatasetBuilder read
    through MegatronPretrainingSampler's index pattern (rank r takes samples [c + r·m,
    c + (r+1)·m) of each global micro batch starting at c = consumed_train_samples), or an
    external iterator seeked to consumed_train_samples; the checkpoint holds what Megatron's
    does for data: the iteration and consumed_train_samples."""
    from megatron.core.datasets.blended_megatron_dataset_builder import (
        BlendedMegatronDatasetBuilder)
    from megatron.core.tokenizers.text.libraries.null_tokenizer import NullTokenizer

    import stoker
    from stoker.integrations.megatron import (StokerGPTDataset, StokerGPTDatasetConfig,
                                              StokerMegatronIterator)

    micro = args.global_rows // world
    model = torch.nn.parallel.DistributedDataParallel(tiny_model())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    iteration, consumed = 0, 0
    if args.resume:
        last = max(Path(args.out).glob("iter_*"), key=lambda p: int(p.name[5:]))
        saved = torch.load(last / "args.pt")
        iteration, consumed = saved["iteration"], saved["consumed_train_samples"]
    if args.mode == "megatron_dataset":
        config = StokerGPTDatasetConfig(
            random_seed=0, sequence_length=args.seq_len, blend=([str(args.data)], None),
            split="100,0,0", tokenizer=NullTokenizer(256), reset_position_ids=True,
            reset_attention_mask=True, eod_mask_loss=False, create_attention_mask=False,
            micro_batch_size=micro, num_workers=1)
        train_ds, _, _ = BlendedMegatronDatasetBuilder(
            StokerGPTDataset, [args.steps * args.global_rows, None, None], lambda: True,
            config).build()

        def batches():
            for start in range(consumed, args.steps * args.global_rows, args.global_rows):
                samples = [train_ds[i] for i in range(start + rank * micro,
                                                      start + (rank + 1) * micro)]
                yield torch.utils.data.default_collate(samples)
        data_iterator = batches()
    else:
        loader = stoker.Loader(args.data, seq_len=args.seq_len, batch_size=micro,
                               num_workers=1, output="torch")
        data_iterator = StokerMegatronIterator(loader)
        data_iterator.seek(consumed)
    while iteration < args.steps:
        batch = next(data_iterator)
        iteration += 1
        consumed += args.global_rows
        labels = torch.where(batch["loss_mask"] > 0, batch["labels"], -100)
        log.write(iteration, batch["tokens"])
        train_step(model, opt, batch["tokens"], labels)
        if iteration % 2 == 0:
            folder = Path(args.out) / f"iter_{iteration:07d}"
            folder.mkdir(parents=True, exist_ok=True)
            if rank == 0:
                torch.save({"iteration": iteration, "consumed_train_samples": consumed},
                           folder / "args.pt")
            dist.barrier()
        if args.kill_at and iteration == args.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["torchtitan", "olmo_core", "megatron_dataset",
                                    "megatron_iterator"])
    args = worker_arguments(p).parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    log = StepLog(args.hashes, rank)
    run = {"torchtitan": run_torchtitan, "olmo_core": run_olmo_core}.get(args.mode, run_megatron)
    run(args, rank, world, log)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
