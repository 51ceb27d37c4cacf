#!/usr/bin/env python3
"""Recipe: stoker's loader inside Hugging Face `Trainer` (and so TRL's trainers, which are
Trainers) for fine-tuning on packed conversations, with stoker.integrations.hf.StokerTrainer
(docs/integrations.md, "Hugging Face Trainer and TRL").

StokerTrainer replaces the `datasets` preprocessing, the collator and the DataLoader: each rank
builds its own batches, each checkpoint folder gets the loader's state, and
`train(resume_from_checkpoint=True)` continues from it without reading the consumed batches
again. stoker's labels are already shifted, so the batches reach the model as `shift_labels`;
`position_ids` restart at every conversation, from which transformers builds the block-diagonal
attention of packed rows (no `attention_mask`, and `use_cache=False`).

    python examples/hf_trainer_chat.py                    # a tiny Llama on CPU, demo data
    python examples/hf_trainer_chat.py --steps 50 --model models/qwen3/ --chats chats.jsonl

Exit status 0 when the model's loss equals the loss computed by hand from stoker's labels,
attention stayed inside each conversation, the Trainer ran its steps, and a second Trainer
resumed from the last checkpoint on the loader's next batch.
"""

import argparse
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM, TrainingArguments

import stoker
from stoker.integrations.hf import StokerTrainer, model_inputs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from finetune_chat import demo_chats, demo_model  # noqa: E402


def tiny_llama(vocab_size, seq_len):
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                         max_position_embeddings=seq_len)
    config._attn_implementation = "sdpa"
    return LlamaForCausalLM(config)


def check_batch(model, batch):
    """The model's loss on stoker's labels equals cross-entropy by hand, and each conversation's
    logits in a packed row equal its logits alone (attention never crossed into it)."""
    with torch.no_grad():
        out = model(**model_inputs(batch))  # what StokerTrainer gives the model
        by_hand = F.cross_entropy(out.logits.flatten(0, 1).float(), batch["labels"].flatten(),
                                  ignore_index=-100)
        same_loss = torch.allclose(out.loss, by_hand, rtol=1e-5, atol=1e-6)
        seg = batch["segment_ids"][0]
        second = (seg == 2).nonzero().flatten()
        isolated = True
        if len(second):
            a, b = int(second[0]), int(second[-1]) + 1
            alone = model(input_ids=batch["input_ids"][:1, a:b],
                          position_ids=batch["position_ids"][:1, a:b], use_cache=False).logits
            isolated = torch.allclose(out.logits[:1, a:b], alone, atol=1e-4)
    return same_loss, isolated


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="model directory for the tokenizer and template (default: demo)")
    p.add_argument("--chats", help="conversations, JSONL (default: made from the sample corpus)")
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--workdir", help="where the data goes (default: a temporary dir)")
    args = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or tmp
        model_dir = args.model or demo_model(os.path.join(work, "model"))
        chats = args.chats or demo_chats(os.path.join(work, "chats.jsonl"), 400, 0)
        data = os.path.join(work, "sft")
        stoker.pack([chats], data, tokenizer=model_dir, overwrite=True)
        loader = stoker.Loader(data, seq_len=args.seq_len, batch_size=args.batch_size,
                               pack="bestfit", num_workers=2, output="torch")
        model = tiny_llama(stoker.inspect(data)["tokenizer"]["vocab_size"], args.seq_len)
        first = next(iter(loader))
        same_loss, isolated = check_batch(model, first)
        del first
        out = os.path.join(work, "out")
        targs = TrainingArguments(output_dir=out, max_steps=args.steps, learning_rate=3e-3,
                                  logging_steps=5, report_to=[], use_cpu=True,
                                  save_strategy="steps", save_steps=args.steps)
        trainer = StokerTrainer(model=model, args=targs, stoker_loader=loader)
        result = trainer.train()
        next(iter(loader))  # the batch after the checkpoint: where a resume must continue
        # What a new process does: a fresh loader and Trainer, resumed from the checkpoint
        # folder, for one more step.
        loader2 = stoker.Loader(data, seq_len=args.seq_len, batch_size=args.batch_size,
                                pack="bestfit", num_workers=2, output="torch")
        targs.max_steps = args.steps + 1
        resumed = StokerTrainer(model=model, args=targs, stoker_loader=loader2)
        resumed.train(resume_from_checkpoint=True)
        same_next = loader2.state_dict() == loader.state_dict()
    print(f"model loss equals stoker labels by hand: {same_loss}; attention inside each "
          f"conversation: {isolated}; trained {result.global_step} steps, "
          f"loss {result.training_loss:.3f}; resumed on the next batch: {same_next}")
    ok = same_loss and isolated and result.global_step == args.steps and same_next
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
