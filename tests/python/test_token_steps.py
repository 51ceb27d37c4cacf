"""Steps counted in tokens (docs/plan.md, "Balanced steps"; issue 45): W loaders in one process,
one per rank, each batch one microbatch; every rank gets the same number of microbatches per
step, every token is served once, the per-step figures agree with the arrays of all ranks
(global_trained_tokens with the loss mask of chat data), a resume is bit-exact, and a checkpoint
of another token budget is refused naming it."""

import json

import numpy as np
import pytest

import stoker
from chat_testlib import make_qwen_models, pack, write_jsonl

FIGURES = ("global_tokens", "global_trained_tokens", "step_tokens", "step_sum_l2",
           "step_imbalance", "step_budget", "microbatch", "microbatches")


@pytest.fixture(scope="module")
def skewed(tmp_path_factory):
    """Documents of log-normal lengths (bytes tokenizer: one token per byte)."""
    root = tmp_path_factory.mktemp("token-steps")
    rng = np.random.default_rng(3)
    src = root / "docs.jsonl"
    lengths = np.clip(rng.lognormal(np.log(120), 1.0, size=300).astype(int), 2, 3000)
    with open(src, "w") as f:
        for n in lengths:
            f.write(json.dumps({"text": "x" * int(n)}) + "\n")
    stoker.pack([src], root / "ds", "bytes", shard_size="16KiB")
    return str(root / "ds"), int(stoker.inspect(root / "ds")["tokens"])


def loaders(path, world, **kw):
    opts = dict(tokens_per_step=8192, microbatches=2, max_tokens_per_microbatch=1024,
                output="numpy", seed=5)
    opts.update(kw)
    return [stoker.Loader(path, world_size=world, rank=r, **opts) for r in range(world)]


def epoch_steps(ranks):
    """The epoch as steps: per step, per rank, the list of its microbatches (copied)."""
    iters = [iter(r) for r in ranks]
    steps = []
    while True:
        batches = [next(it, None) for it in iters]
        if all(b is None for b in batches):
            return steps
        assert all(b is not None for b in batches), "ranks ran out of microbatches unevenly"
        copies = [dict({k: np.array(v) for k, v in b.items()}, _step=b.step,
                       _trained=b.trained_tokens, _real=b.real_tokens) for b in batches]
        if int(copies[0]["microbatch"]) == 0:
            steps.append([[c] for c in copies])
        else:
            for r, c in enumerate(copies):
                steps[-1][r].append(c)


@pytest.mark.parametrize("world", [1, 3, 8])
def test_every_token_once_equal_microbatches_and_figures(skewed, world):
    path, total = skewed
    ranks = loaders(path, world)
    length = len(ranks[0])  # of epoch 0, asked before iterating (then the next epoch's)
    steps = epoch_steps(ranks)
    assert length == sum(len(step[0]) for step in steps)  # len counts microbatches
    served = 0
    for step in steps:
        counts = {len(mbs) for mbs in step}
        assert len(counts) == 1, "every rank has the same number of microbatches"
        (m,) = counts
        real = sum(c["_real"] for mbs in step for c in mbs)
        trained = sum(int((c["labels"] != -100).sum()) for mbs in step for c in mbs)
        for r, mbs in enumerate(step):
            for k, c in enumerate(mbs):
                assert c["input_ids"].shape == (1, 1024)
                assert int(c["microbatch"]) == k and int(c["microbatches"]) == m >= 2
                assert int(c["global_tokens"]) == real
                assert int(c["global_trained_tokens"]) == trained
                assert int(c["step_tokens"]) == sum(x["_real"] for x in mbs)
                assert float(c["step_imbalance"]) >= 1.0
        served += real
    assert served == total


def test_trained_tokens_of_chat_data_come_from_the_loss_mask(stoker_cli, tmp_path):
    from test_chat_loader import conversations
    model = make_qwen_models(tmp_path / "models")["qwen2_5"]
    jsonl = write_jsonl(tmp_path / "chats.jsonl", conversations(60))
    out = tmp_path / "sft"
    r = pack(stoker_cli, jsonl, "-o", out, "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    epoch_trained = []
    # Chat packs carry the kernel fields too (issue 46): with padding and a cap per microbatch
    # the epoch trains the same targets, the padding none.
    for extra in ({}, dict(pad_each_document_to=8, max_documents_per_row=3, seq_idx=True)):
        steps = epoch_steps(loaders(str(out), 3, tokens_per_step=2048,
                                    max_tokens_per_microbatch=512, **extra))
        assert steps
        trained = 0
        for step in steps:
            masked = sum(int(c["loss_mask"].sum()) for mbs in step for c in mbs)
            assert masked > 0
            for mbs in step:
                assert int(mbs[0]["global_trained_tokens"]) == masked
            trained += masked
        epoch_trained.append(trained)
    assert epoch_trained[0] == epoch_trained[1]


def test_resume_mid_epoch_is_bit_exact_and_another_budget_is_refused(skewed):
    path, _ = skewed
    loader = stoker.Loader(path, world_size=2, rank=1, tokens_per_step=8192, microbatches=2,
                           max_tokens_per_microbatch=1024, output="numpy", seed=5)
    it = iter(loader)
    for _ in range(7):
        batch = next(it)
    state = batch.state_after
    rest = [{k: np.array(v) for k, v in b.items()} for b in it]
    again = stoker.Loader(path, world_size=2, rank=1, tokens_per_step=8192, microbatches=2,
                          max_tokens_per_microbatch=1024, output="numpy", seed=5)
    again.load_state_dict(state)
    assert again.steps_remaining() == len(rest)
    resumed = [{k: np.array(v) for k, v in b.items()} for b in again]
    assert len(resumed) == len(rest) > 0
    for a, b in zip(resumed, rest):
        assert a.keys() == b.keys() and set(FIGURES) <= a.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    other = stoker.Loader(path, world_size=2, rank=1, tokens_per_step=16384, microbatches=2,
                          max_tokens_per_microbatch=1024, output="numpy", seed=5)
    with pytest.raises(Exception, match=r"tokens_per_step \(8192 in the checkpoint, 16384 here\)"):
        other.load_state_dict(state)


def test_attention_balance_from_a_config_and_the_plan_stats(skewed, tmp_path, run_stoker):
    path, _ = skewed
    config = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688,
              "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(config))
    ranks = loaders(path, 4, balance="attention", model=tmp_path)
    steps = epoch_steps(ranks)
    assert max(float(s[0][0]["step_imbalance"]) for s in steps) < 1.5
    with pytest.raises(Exception, match="model="):
        stoker.Loader(path, tokens_per_step=8192, balance="attention", output="numpy")
    r = run_stoker("plan", path, "--seq-len", "1024", "--batch-size", "1", "--tokens-per-step", "8K", "--world-size",
                   "8", "--balance", "attention", "--model-config", str(tmp_path / "config.json"),
                   "--stats")
    assert r.returncode == 0, r.stderr
    assert "per-rank cost max/mean: fixed rows" in r.stdout and "balanced" in r.stdout


def test_what_token_steps_refuse_says_what_to_do(skewed, tmp_path):
    path, _ = skewed
    with pytest.raises(ValueError, match="cross_document_targets"):
        stoker.Loader(path, tokens_per_step=8192, cross_document_targets=True, output="numpy")
    with pytest.raises(ValueError, match=r"cannot read .*config\.json"):
        stoker.Loader(path, tokens_per_step=8192, balance="attention", model=tmp_path,
                      output="numpy")
    with pytest.raises(ValueError, match="microbatches must be in"):
        stoker.Loader(path, tokens_per_step=8192, microbatches=70000, output="numpy")
    # Numbers for the cost are fine; a row loader refuses a token-step checkpoint.
    tokens = stoker.Loader(path, tokens_per_step=8192, balance="attention", model="1,0.001",
                           output="numpy", max_tokens_per_microbatch=1024)
    state = next(iter(tokens)).state_after
    rows = stoker.Loader(path, seq_len=1024, batch_size=1, output="numpy")
    with pytest.raises(Exception):
        rows.load_state_dict(state)
    with pytest.raises(ValueError, match="stoker.Loader"):
        stoker.plan(path, 1024, 1, tokens_per_step=8192)


def test_elastic_resume_mid_step_serves_the_rest_once(skewed):
    path, total = skewed
    old = [iter(r) for r in loaders(path, 3)]
    served = 0
    for _ in range(4):  # the first step's microbatches, then the second's first
        batches = [next(it) for it in old]
        served += sum(b.real_tokens for b in batches)
    assert int(batches[0]["microbatch"]) + 1 < int(batches[0]["microbatches"])  # mid-step
    state = batches[0].state_after
    new = loaders(path, 5)
    for r in new:
        r.load_state_dict(state)
    served += sum(b.real_tokens for r in new for b in r)
    assert served == total
