#!/usr/bin/env python3
"""Supervised fine-tuning on conversations, fed by stoker: a tiny GPT on CPU learns the assistant's
answers only. The conversations are rendered by the model's own chat template and packed with
their loss mask (`stoker pack`); the loader packs several conversations per row (best fit), keeps
attention inside each (segment_ids, position_ids), never splits one across rows, and gives labels
that are -100 wherever the next token is not trained (docs/chat.md).

    python examples/finetune_chat.py                        # a demo model directory and chats
    python examples/finetune_chat.py --model models/qwen3/ --chats chats.jsonl --steps 200

--model is a directory with tokenizer.json and tokenizer_config.json (with its chat_template), as
model repositories ship them. Without it, the example builds one: a byte-level BPE tokenizer
trained on the sample corpus (with the `tokenizers` library) and Qwen2.5's chat template. Without
--chats, it writes question-and-answer conversations from the sample corpus.

Exit status 0 when every batch's loss_mask matched its labels and the training loss fell.
"""

import argparse
import json
import os
import random
import sys
import tempfile

import torch
import torch.nn.functional as F

import stoker

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "examples"))
from train_tiny_gpt import TinyGPT  # noqa: E402  (the same tiny model)

QWEN_TEMPLATE = os.path.join(REPO, "tests", "data", "chat_templates", "qwen2_5.jinja")


def demo_model(directory):
    """A model directory: a byte-level BPE tokenizer trained on the sample corpus, with Qwen's
    control tokens, and Qwen2.5's chat template in tokenizer_config.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(REPO, "data", "sample", "corpus.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2048, special_tokens=["<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.save(os.path.join(directory, "tokenizer.json"))
    with open(QWEN_TEMPLATE, encoding="utf-8") as f:
        template = f.read()
    config = {"eos_token": "<|im_end|>", "chat_template": template,
              "added_tokens_decoder": {"0": {"content": "<|im_start|>", "special": True},
                                       "1": {"content": "<|im_end|>", "special": True}}}
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    return directory


def demo_chats(path, n, seed):
    """n conversations from the sample corpus: a question quoting a sentence, the answer the next
    one; some with a system prompt, some with two turns."""
    rng = random.Random(seed)
    with open(os.path.join(REPO, "data", "sample", "corpus.jsonl"), encoding="utf-8") as f:
        sentences = [s.strip() + "." for line in f for s in json.loads(line)["text"].split(".")
                     if 20 < len(s.strip()) < 200]
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(n):
            messages = [{"role": "system", "content": "Continue the text."}] \
                if rng.random() < 0.3 else []
            for _ in range(rng.choice((1, 1, 2))):
                k = rng.randrange(len(sentences) - 1)
                messages += [{"role": "user", "content": sentences[k]},
                             {"role": "assistant", "content": sentences[k + 1]}]
            f.write(json.dumps({"messages": messages}) + "\n")
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="model directory (default: a demo one)")
    p.add_argument("--chats", help="conversations, JSONL (default: made from the sample corpus)")
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--workdir", help="where the data goes (default: a temporary dir)")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or tmp
        model_dir = args.model or demo_model(os.path.join(work, "model"))
        chats = args.chats or demo_chats(os.path.join(work, "chats.jsonl"), 400, args.seed)
        data = os.path.join(work, "sft")
        result = stoker.pack([chats], data, tokenizer=model_dir, overwrite=True)
        summary = stoker.inspect(data)
        print(f"packed {summary['documents']} conversations: {summary['tokens']} tokens, "
              f"{result['manifest']['loss_mask']['trained_tokens']} trained")

        loader = stoker.Loader(data, seq_len=args.seq_len, batch_size=args.batch_size,
                               pack="bestfit", num_workers=2, seed=args.seed)
        vocab = stoker.inspect(data)["tokenizer"]["vocab_size"]
        model = TinyGPT(vocab, args.seq_len)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        losses, masks_ok, step = [], True, 0
        while step < args.steps:
            for batch in loader:
                # labels are -100 wherever the next token is not trained: the user's turns, the
                # system prompt, the template's headers, padding. loss_mask says the same.
                masks_ok &= bool(torch.equal(batch["loss_mask"].bool(), batch["labels"] != -100))
                logits = model(batch["input_ids"], batch["position_ids"], batch["segment_ids"])
                loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(),
                                       ignore_index=-100)
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                losses.append(loss.item())
                if step % 5 == 0 or step == 1:
                    real = int((batch["segment_ids"] > 0).sum())
                    trained = int(batch["loss_mask"].sum())
                    cells = batch["input_ids"].numel()
                    print(f"step {step:3d}  loss {loss.item():.4f}  real tokens {real / cells:.1%}"
                          f"  trained {trained / cells:.1%}")
                if step == args.steps:
                    break
        stats = loader.stats()
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    print(f"masks match labels: {masks_ok}; loss {first:.3f} -> {last:.3f}; "
          f"{stats['long_documents_dropped']} long conversations left out")
    return 0 if masks_ok and last < first else 1


if __name__ == "__main__":
    sys.exit(main())
