"""One rank of a StokerTrainer run (tests/python/test_integration_hf.py launches it under gloo).

Trains a tiny Llama (2 layers, hidden 32) with stoker.integrations.hf.StokerTrainer and appends
each step's row hashes, and the step's trained-token counts, to HASHES/steps-rank{RANK}.jsonl.
``--kill-at K`` ends the process with SIGKILL when step K ends (no clean shutdown);
``--resume`` resumes from the last checkpoint folder.
"""

import argparse
import os
import signal
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, TrainerCallback, TrainingArguments

import stoker
from integration_testlib import StepLog, worker_arguments
from stoker.integrations.hf import StokerTrainer


def tiny_llama(vocab_size, seq_len):
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=seq_len)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return LlamaForCausalLM(config)


class KillAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            os.kill(os.getpid(), signal.SIGKILL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--save-steps", type=int, default=2)
    args = worker_arguments(p).parse_args()
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    log = StepLog(args.hashes, rank)
    per_rank = args.global_rows // world // args.grad_accum
    loader = stoker.Loader(args.data, seq_len=args.seq_len, batch_size=per_rank, num_workers=1,
                           output="torch")
    vocab = stoker.inspect(args.data)["tokenizer"]["vocab_size"]
    targs = TrainingArguments(output_dir=args.out, max_steps=args.steps, learning_rate=1e-3,
                              per_device_train_batch_size=per_rank, use_cpu=True,
                              gradient_accumulation_steps=args.grad_accum,
                              save_strategy="steps", save_steps=args.save_steps, report_to=[],
                              logging_steps=1, ddp_backend="gloo" if world > 1 else None,
                              disable_tqdm=True, seed=0)

    class Traced(StokerTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            # What the step trains on: its rows, this rank's trained targets, and the
            # num_items_in_batch the Trainer gives the loss.
            log.write(self.state.global_step + 1, inputs["input_ids"],
                      local_items=int((inputs["shift_labels"] != -100).sum()),
                      num_items=None if num_items_in_batch is None else int(num_items_in_batch))
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    callbacks = [KillAt(args.kill_at)] if args.kill_at else []
    trainer = Traced(model=tiny_llama(vocab, args.seq_len), args=targs, stoker_loader=loader,
                     callbacks=callbacks)
    result = trainer.train(resume_from_checkpoint=True if args.resume else None)
    print(f"rank {rank}: trained to step {result.global_step}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
