"""stoker.integrations.hf against the real transformers Trainer (5.23.0, accelerate 1.16.0) on CPU:
two ranks over gloo train a tiny Llama from a stoker.Loader; a run killed with SIGKILL and resumed
from the Trainer's own checkpoint trains on exactly the uninterrupted run's tokens at every later
step, on every rank; a resume on three ranks serves the rest of the epoch, and every row of the
epoch is trained once; the loss gets the global count of trained tokens."""

import pytest

import stoker
from integration_testlib import (check_elastic_resume, check_kill_9_resume, make_text_dataset,
                                 read_steps, require_releases, runner)

require_releases(transformers="5.23.0", accelerate="1.16.0", trl="1.16.0")

SEQ = 64


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_text_dataset(tmp_path_factory.mktemp("hf-data"), documents=40)


def test_kill_9_and_resume_trains_the_uninterrupted_runs_tokens(data, tmp_path):
    run = runner("hf_trainer_worker.py", data, SEQ)
    check_kill_9_resume(run, data, SEQ, tmp_path)
    saved = (tmp_path / "b" / "checkpoint-4" / "stoker_state.json").read_text()
    assert '"global_step": 4' in saved


def test_resume_on_three_ranks_trains_each_row_of_the_epoch_once(data, tmp_path):
    run = runner("hf_trainer_worker.py", data, SEQ)
    check_elastic_resume(run, data, SEQ, tmp_path, old=2, new=3)


def test_loss_gets_the_global_count_of_trained_tokens(data, tmp_path):
    run = runner("hf_trainer_worker.py", data, SEQ)
    results = run(tmp_path / "o", tmp_path / "log", 2, 3, grad_accum=2, global_rows=8)
    for rc, out in results:
        assert rc == 0, out[-3000:]
    steps = read_steps(tmp_path / "log", 2)
    for s in range(1, 4):
        micro = steps[(s, 0)] + steps[(s, 1)]
        assert len(micro) == 4  # two micro-batches per rank
        total = sum(m["local_items"] for m in micro)
        assert {m["num_items"] for m in micro} == {total}


# -- in this process: what cannot be honoured is refused -----------------------------------------


@pytest.fixture(scope="module")
def hf():
    import transformers

    from stoker.integrations import hf as adapter

    return transformers, adapter


def tiny(transformers, vocab):
    config = transformers.LlamaConfig(vocab_size=vocab, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=1, num_attention_heads=2,
                                      num_key_value_heads=2, max_position_embeddings=SEQ)
    return transformers.LlamaForCausalLM(config)


def args(transformers, out, **kw):
    return transformers.TrainingArguments(output_dir=str(out), use_cpu=True, report_to=[],
                                          disable_tqdm=True, **kw)


def loader(data, **kw):
    kw.setdefault("rank", 0)
    kw.setdefault("world_size", 1)
    return stoker.Loader(str(data), seq_len=SEQ, batch_size=2, num_workers=1, **kw)


def test_a_model_smaller_than_the_datasets_vocabulary_is_refused(hf, data, tmp_path):
    transformers, adapter = hf
    with pytest.raises(ValueError, match="embedding rows.*pack the data with the model's"):
        adapter.StokerTrainer(model=tiny(transformers, 100),
                              args=args(transformers, tmp_path, max_steps=2),
                              stoker_loader=loader(data))


def test_a_run_without_max_steps_or_of_another_world_is_refused(hf, data, tmp_path):
    transformers, adapter = hf
    model = tiny(transformers, 257)
    with pytest.raises(ValueError, match="set TrainingArguments.max_steps"):
        adapter.StokerTrainer(model=model, args=args(transformers, tmp_path),
                              stoker_loader=loader(data))
    with pytest.raises(ValueError, match="rank 1 of 2 and the Trainer's process is 0 of 1"):
        adapter.StokerTrainer(model=model, args=args(transformers, tmp_path, max_steps=2),
                              stoker_loader=loader(data, rank=1, world_size=2))


def test_a_checkpoint_without_the_loaders_state_is_refused(hf, data, tmp_path):
    transformers, adapter = hf
    model = tiny(transformers, 257)
    plain = transformers.Trainer(model=model, args=args(transformers, tmp_path / "plain",
                                                        max_steps=1, save_steps=1),
                                 train_dataset=[{"input_ids": [1, 2, 3], "labels": [1, 2, 3]}])
    plain.train()
    ckpt = tmp_path / "plain" / "checkpoint-1"
    assert ckpt.is_dir()
    trainer = adapter.StokerTrainer(model=model, args=args(transformers, tmp_path / "s",
                                                           max_steps=2),
                                    stoker_loader=loader(data))
    with pytest.raises(ValueError, match="no stoker_state.json.*not written by a StokerTrainer"):
        trainer.train(resume_from_checkpoint=str(ckpt))


def test_the_trainers_logs_carry_the_loaders_metrics(hf, data, tmp_path):
    """Loader(metrics=stoker.metrics.Latest()): each Trainer log has the latest window's figures,
    before the reporting callbacks (a user's callback stands for report_to's) see the logs."""
    transformers, adapter = hf
    logged, windows = [], []

    class Report(transformers.TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                logged.append((state.global_step, dict(logs)))

    latest = stoker.metrics.Latest()
    trainer = adapter.StokerTrainer(
        model=tiny(transformers, 257),
        args=args(transformers, tmp_path, max_steps=4, logging_steps=2, save_strategy="no"),
        stoker_loader=loader(data, metrics=[latest, lambda s, m: windows.append((s, m))],
                             metrics_every=2),
        callbacks=[Report()])
    trainer.train()
    assert [s for s, _ in logged] == [2, 4]
    assert len(windows) >= 2  # the loader may run ahead of the Trainer's log by a window
    for (_, logs), (_, window) in zip(logged, windows):
        assert logs["stoker/tokens"] == window["stoker/tokens"] > 0
        assert logs["stoker/steps"] == 2


# -- TRL's SFTTrainer on stoker's chat packs -----------------------------------------------------


@pytest.fixture(scope="module")
def chat_pack(tmp_path_factory):
    from chat_testlib import make_qwen_models, records, write_jsonl

    base = tmp_path_factory.mktemp("hf-chat")
    model_dir = make_qwen_models(base / "models")["qwen2_5"]
    jsonl = write_jsonl(base / "chats.jsonl", records() * 12)
    out = base / "sft"
    stoker.pack([str(jsonl)], str(out), tokenizer=str(model_dir), overwrite=True)
    return out, model_dir


def test_trl_sft_trainer_trains_on_chat_packs_and_resumes_on_the_next_batch(hf, chat_pack,
                                                                           tmp_path):
    import torch
    import trl
    from transformers import PreTrainedTokenizerFast

    transformers, adapter = hf
    data, model_dir = chat_pack
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(model_dir / "tokenizer.json"),
                                        eos_token="<|im_end|>", pad_token="<|im_end|>")
    vocab = stoker.inspect(data)["tokenizer"]["vocab_size"]
    assert len(tokenizer) == vocab

    def sft(out, steps, loader, seen):
        class Traced(adapter.StokerSFTTrainer):
            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
                seen.append((inputs["input_ids"].clone(), int(num_items_in_batch)))
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

        config = trl.SFTConfig(output_dir=str(out), max_steps=steps, save_steps=2, use_cpu=True,
                               report_to=[], disable_tqdm=True, learning_rate=1e-3)
        torch.manual_seed(0)
        return Traced(model=tiny(transformers, vocab), args=config, stoker_loader=loader,
                      processing_class=tokenizer)

    def chat_loader():
        return stoker.Loader(str(data), seq_len=SEQ * 2, batch_size=2, pack="bestfit",
                             num_workers=1, rank=0, world_size=1)

    full = []
    sft(tmp_path / "full", 4, chat_loader(), full).train()
    part = []
    sft(tmp_path / "part", 2, chat_loader(), part).train()
    resumed = []
    sft(tmp_path / "part", 4, chat_loader(), resumed).train(resume_from_checkpoint=True)
    assert len(full) == 4 and len(resumed) == 2
    for (a, na), (b, nb) in zip(full[2:], resumed):
        assert torch.equal(a, b) and na == nb
    # num_items_in_batch is the step's count of trained targets (single rank here).
    first = next(iter(chat_loader()))
    assert full[0][1] == int((first["labels"] != -100).sum())


def test_import_stoker_imports_no_trainer():
    import subprocess
    import sys

    code = ("import sys, stoker, stoker.integrations; "
            "loaded = [m for m in ('transformers', 'accelerate', 'trl', 'lightning', 'litgpt', "
            "'torchtitan', 'megatron', 'olmo_core') if m in sys.modules]; "
            "assert not loaded, loaded")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
