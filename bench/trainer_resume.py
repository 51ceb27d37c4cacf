#!/usr/bin/env python3
"""Resume at step 1,000,000: time to the first batch, stoker's Trainer adapter against the
Hugging Face Trainer's default fast-forward (transformers #18649).

- stoker: a StokerTrainer's checkpoint folder of step 1,000,000 (written by its own
  _save_checkpoint path: stoker_state.json), then what train(resume_from_checkpoint=...) does
  for the data: restore_stoker_state(folder), then the first batch of get_train_dataloader().
- Trainer default: the DataLoader a stock Trainer builds (get_train_dataloader: default collator,
  accelerator.prepare) over the same rows, fast-forwarded with accelerate's skip_first_batches as
  Trainer._run_epoch does on resume; measured at --skip-steps (10,000) and extrapolated to
  1,000,000 at the measured rate. Two datasets: an IterableDataset (datasets'
  to_iterable_dataset(), the streaming case of transformers #18649: the skip reads and collates
  every consumed batch), and a map-style datasets.Dataset (accelerate skips sampler indices
  without reading the rows, but the resume is only as right as the sampler: it cannot change
  the world size or continue a packed stream).

    .venv/bin/python bench/trainer_resume.py [--seq-len 2048] [--batch-size 8]
"""

import argparse
import json
import os
import tempfile
import time

import numpy as np


def write_dataset(work, documents, seed=0):
    """A stoker dataset of random documents (uint16 tokens, 200 to 4,000 each), via JSONL."""
    import stoker

    rng = np.random.default_rng(seed)
    src = os.path.join(work, "docs.jsonl")
    with open(src, "w") as f:
        for _ in range(documents):
            n = int(rng.integers(200, 4000))
            f.write(json.dumps({"text": "".join(chr(97 + c) for c in rng.integers(0, 26, n))})
                    + "\n")
    out = os.path.join(work, "data")
    stoker.pack([src], out, overwrite=True)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seq-len", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--documents", type=int, default=4000)
    p.add_argument("--resume-step", type=int, default=1_000_000)
    p.add_argument("--skip-steps", type=int, default=10_000)
    args = p.parse_args()

    import datasets
    import torch
    from accelerate import skip_first_batches
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    import stoker
    from stoker.integrations.hf import StokerTrainer

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as work:
        data = write_dataset(work, args.documents)
        model = LlamaForCausalLM(LlamaConfig(vocab_size=257, hidden_size=32,
                                             intermediate_size=64, num_hidden_layers=1,
                                             num_attention_heads=2, num_key_value_heads=2))
        targs = TrainingArguments(output_dir=os.path.join(work, "out"), use_cpu=True,
                                  report_to=[], max_steps=args.resume_step + 10,
                                  per_device_train_batch_size=args.batch_size)

        # stoker: a checkpoint of step resume_step, written by the adapter itself.
        loader = stoker.Loader(data, seq_len=args.seq_len, batch_size=args.batch_size,
                               rank=0, world_size=1, monitor_warnings=False)
        trainer = StokerTrainer(model=model, args=targs, stoker_loader=loader)
        steps = len(loader)
        epoch, step = divmod(args.resume_step, steps)
        state = loader.state_dict_at(epoch, step)
        folder = os.path.join(work, "out", f"checkpoint-{args.resume_step}")
        os.makedirs(folder)
        with open(os.path.join(folder, "stoker_state.json"), "w") as f:
            json.dump({"format": "stoker-hf-checkpoint", "global_step": args.resume_step,
                       "world_size": 1, "states": [state]}, f)
        fresh = stoker.Loader(data, seq_len=args.seq_len, batch_size=args.batch_size,
                              rank=0, world_size=1, monitor_warnings=False)
        trainer.stoker_loader = fresh
        t0 = time.perf_counter()
        trainer.restore_stoker_state(folder)
        first = next(iter(trainer.get_train_dataloader()))
        stoker_s = time.perf_counter() - t0
        assert first["input_ids"].shape == (args.batch_size, args.seq_len)

        # The Trainer's default: the same rows as a datasets.Dataset, skipped.
        rows = []
        for b in stoker.Loader(data, seq_len=args.seq_len, batch_size=256, rank=0,
                               world_size=1, output="numpy", monitor_warnings=False):
            rows.append(b["input_ids"].copy())
        ids = np.concatenate(rows)
        ds = datasets.Dataset.from_dict({"input_ids": ids, "labels": ids})
        need = args.skip_steps + 1
        if len(ds) < need * args.batch_size:  # repeat the rows up to the skip
            ds = datasets.concatenate_datasets([ds] * (need * args.batch_size // len(ds) + 1))
        skips = {}
        for name, train in (("IterableDataset", ds.to_iterable_dataset()), ("map-style", ds)):
            plain = Trainer(model=model, args=targs, train_dataset=train)
            dl = plain.get_train_dataloader()
            t0 = time.perf_counter()
            next(iter(skip_first_batches(dl, args.skip_steps)))
            skips[name] = time.perf_counter() - t0
    print(f"batch {args.batch_size} x {args.seq_len}, resume at step {args.resume_step:,}")
    print(f"stoker adapter: first batch after resume in {stoker_s * 1000:.1f} ms")
    for name, skip_s in skips.items():
        rate = args.skip_steps / skip_s
        print(f"Trainer default skip, {name}: {args.skip_steps:,} batches in {skip_s:.2f} s "
              f"({rate:,.0f} batches/s); at step {args.resume_step:,}: "
              f"{args.resume_step / rate:,.0f} s ({args.resume_step / rate / 3600:.2f} h)")


if __name__ == "__main__":
    main()
