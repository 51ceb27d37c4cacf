"""Steps counted in tokens on a stream (docs/streaming.md, "Steps counted in tokens"; issue 45):
W loaders of one stoker.Stream in one process, one per rank, each batch one microbatch. Every rank
gets the same number of microbatches in every step, no document is served twice, the global
figures equal the sums over all ranks' arrays, a resume mid-step is bit-exact, and a chat stream's
trained tokens come from its loss mask (its global_trained_tokens is left out: another rank's
mask is not known without communication)."""

import json
import random

import numpy as np
import pytest

import stoker
from chat_testlib import make_qwen_models, write_jsonl
from test_token_steps import FIGURES, epoch_steps

BUDGET = 512


@pytest.fixture(scope="module")
def skewed_jsonl(tmp_path_factory):
    """Three JSONL files of log-normal document lengths (bytes tokenizer: one token per byte);
    every document names itself at its start."""
    root = tmp_path_factory.mktemp("stream-token-steps")
    rng = np.random.default_rng(11)
    paths = []
    for f, count in enumerate((250, 20, 90)):
        lengths = np.clip(rng.lognormal(np.log(100), 1.0, size=count).astype(int), 12, 2500)
        with open(root / f"part-{f}.jsonl", "w") as out:
            for i, n in enumerate(lengths):
                head = f"<{f}-{i}>"
                out.write(json.dumps({"text": head + "x" * (int(n) - len(head))}) + "\n")
        paths.append(str(root / f"part-{f}.jsonl"))
    return paths


def stream_loaders(paths, world, **kw):
    opts = dict(tokens_per_step=2048 * world, microbatches=2, max_tokens_per_microbatch=BUDGET,
                balance="attention", model="1,0.01", output="numpy", seed=5, num_workers=1)
    opts.update(kw)
    return [stoker.Loader(stoker.Stream(paths, shuffle_buffer=32, scan_cache=None),
                          world_size=world, rank=r, **opts) for r in range(world)]


def figures(batch):
    """A copied batch's step figures as Python numbers (its 0-d arrays)."""
    return {k: (float if k == "step_imbalance" else int)(batch[k]) for k in FIGURES if k in batch}


@pytest.mark.parametrize("world", [1, 3, 8])
def test_equal_microbatches_each_document_once_and_exact_global_figures(skewed_jsonl, world):
    ranks = stream_loaders(skewed_jsonl, world)
    lengths = {len(r) for r in ranks}
    assert len(lengths) == 1  # the same number of batches (microbatches) on every rank
    steps = epoch_steps(ranks)
    assert sum(len(s[0]) for s in steps) == lengths.pop()
    assert len(steps) >= 2
    seen = []
    for step in steps:
        counts = {len(per_rank) for per_rank in step}
        assert len(counts) == 1, "ranks took different microbatch counts in one step"
        figs = [figures(per_rank[0]) for per_rank in step]
        assert all(f["microbatches"] == len(step[0]) >= 2 for f in figs)
        assert len({(f["global_tokens"], f["global_trained_tokens"], f["step_imbalance"])
                    for f in figs}) == 1
        real = trained = 0
        for r, per_rank in enumerate(step):
            own = sum(int((mb["segment_ids"] > 0).sum()) for mb in per_rank)
            assert figs[r]["step_tokens"] == own
            real += own
            trained += sum(int((mb["labels"] != -100).sum()) for mb in per_rank)
            for mb in per_rank:
                assert mb["input_ids"].shape == (1, BUDGET)
                ids, seg = mb["input_ids"][0], mb["segment_ids"][0]
                for s in sorted(set(seg.tolist()) - {0}):
                    text = bytes(t for t in ids[seg == s].tolist() if t < 256).decode(errors="replace")
                    if text.startswith("<"):
                        seen.append(text[:text.index(">") + 1])
        assert figs[0]["global_tokens"] == real
        assert figs[0]["global_trained_tokens"] == trained
    assert len(seen) == len(set(seen)), "a document served twice"


def test_a_resume_mid_step_is_bit_exact(skewed_jsonl):
    world, rank = 3, 1
    copy = lambda b: {k: np.array(v) for k, v in b.items()}  # noqa: E731
    full = [copy(b) for b in stream_loaders(skewed_jsonl, world)[rank]]
    first = stream_loaders(skewed_jsonl, world)[rank]
    it = iter(first)
    at = next(i for i, b in enumerate(full) if int(b["microbatch"]) == 1) + 2
    for _ in range(at):
        next(it)
    assert first.steps_remaining() == len(full) - at  # microbatches left
    state = json.loads(json.dumps(first.state_dict()))
    resumed = stream_loaders(skewed_jsonl, world)[rank]
    resumed.load_state_dict(state)
    assert resumed.steps_remaining() == len(full) - at
    rest = [copy(b) for b in resumed]
    assert len(rest) == len(full) - at > 0
    for a, b in zip(rest, full[at:]):
        assert figures(a) == figures(b)
        for k in ("input_ids", "labels", "segment_ids", "position_ids"):
            np.testing.assert_array_equal(a[k], b[k])


def test_a_stream_counted_in_tokens_needs_the_prescan_and_a_real_cost(skewed_jsonl):
    with pytest.raises(ValueError, match="tokens_per_step needs the pre-scan"):
        stoker.Loader(stoker.Stream(skewed_jsonl, steps_per_epoch=4, scan_cache=None),
                      tokens_per_step=4096, max_tokens_per_microbatch=BUDGET)
    with pytest.raises(ValueError, match="attention term"):
        stream_loaders(skewed_jsonl, 1, model="1,0")


@pytest.mark.parametrize("option,value,named", [
    ("pad_each_document_to", 8, "pad_each_document_to"),
    ("max_documents_per_row", 3, "max_documents_per_row"),
    ("context_parallel", (2, 0), "context_parallel"),
])
def test_a_stream_counted_in_tokens_refuses_padding_and_a_row_cap(skewed_jsonl, option, value,
                                                                  named):
    # Its windows are dealt by unpadded lengths with no cap: refused at open, never overflowed.
    with pytest.raises(ValueError, match=f"tokens_per_step does not go with {named}"):
        stream_loaders(skewed_jsonl, 1, **{option: value})


def test_a_chat_stream_counts_trained_tokens_from_its_loss_mask(tmp_path):
    model = make_qwen_models(tmp_path / "models")["qwen2_5"]
    rng = random.Random(4)
    words = "alpha beta gamma delta rain snow sun wind river stone tree leaf".split()
    say = lambda k: " ".join(rng.choice(words) for _ in range(k))  # noqa: E731
    rows = []
    for _ in range(160):
        msgs = []
        for _ in range(rng.randint(1, 3)):
            msgs += [{"role": "user", "content": say(rng.randint(1, 8))},
                     {"role": "assistant", "content": say(rng.randint(1, 30))}]
        rows.append({"messages": msgs})
    jsonl = str(write_jsonl(tmp_path / "chats.jsonl", rows))
    ranks = [stoker.Loader(stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=16,
                                         scan_cache=None),
                           tokens_per_step=2 * 1500, microbatches=2, max_tokens_per_microbatch=400,
                           world_size=2, rank=r, output="numpy", num_workers=1, seed=1)
             for r in range(2)]
    steps = epoch_steps(ranks)
    assert len(steps) >= 2
    masked = 0
    for step in steps:
        for per_rank in step:
            for mb in per_rank:
                assert "global_trained_tokens" not in mb  # not known to one rank: left out
                assert "step_tokens" in mb
                mask = mb["loss_mask"]
                # The trained targets are exactly the loss mask's ones, and fewer than the
                # real tokens (prompts are not trained).
                assert mb["_trained"] == int(mask.sum()) == int((mb["labels"] != -100).sum())
                masked += int(mask.sum())
                assert int(mask.sum()) < int((mb["segment_ids"] > 0).sum()) or mask.sum() == 0
            assert figures(per_rank[0])["step_tokens"] == sum(
                int((mb["segment_ids"] > 0).sum()) for mb in per_rank)
    assert masked > 0
