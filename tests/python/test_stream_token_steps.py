"""Steps counted in tokens on a stream (docs/streaming.md, "Steps counted in tokens"; issue 45):
W loaders of one stoker.Stream in one process, one per rank, each batch one microbatch. Every rank
gets the same number of microbatches in every step, no document is served twice, the global
figures equal the sums over all ranks' arrays, a resume mid-step is bit-exact, and a chat stream's
trained tokens come from its loss mask (its global_trained_tokens from each document's trained
targets, which the pre-scan keeps: the sum over every rank's loss masks)."""

import itertools
import json
import random
import subprocess

import numpy as np
import pytest

import stoker
from chat_testlib import make_qwen_models, write_jsonl
from test_stream_kernel_fields import check_bit_exact_resume, check_padded_layout, copied
from test_token_steps import FIGURES, epoch_steps
from test_token_steps_kernel_fields import CAP, EOS, M, check_cp_shares, document_of, pieces_of

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


def stream_loader(paths, world, rank, **kw):
    opts = dict(tokens_per_step=2048 * world, microbatches=2, max_tokens_per_microbatch=BUDGET,
                balance="attention", model="1,0.01", output="numpy", seed=5, num_workers=1)
    opts.update(kw)
    return stoker.Loader(stoker.Stream(paths, shuffle_buffer=32, scan_cache=None),
                         world_size=world, rank=rank, **opts)


def stream_loaders(paths, world, **kw):
    return [stream_loader(paths, world, r, **kw) for r in range(world)]


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


def test_an_elastic_resume_at_an_epochs_end_is_the_new_worlds_fresh_epoch(skewed_jsonl):
    """W = 2 -> 3 with every old rank's state: at an epoch's end the new world's next epoch is a
    fresh loader's; inside an epoch it is refused, naming the step."""
    kw = dict(tokens_per_step=2 * 2048)  # the same token budget on both worlds
    old = stream_loaders(skewed_jsonl, 2, **kw)
    its = [iter(loader) for loader in old]
    for it in its:  # into step 1
        for _ in range(int(next(it)["microbatches"])):
            next(it)
    mid = [loader.state_dict() for loader in old]
    with pytest.raises(ValueError, match="only at an epoch's start"):
        stream_loaders(skewed_jsonl, 3, **kw)[0].load_state_dict(mid)
    for it in its:
        for _ in it:
            pass
    end = [loader.state_dict() for loader in old]
    resumed = stream_loaders(skewed_jsonl, 3, **kw)
    fresh = stream_loaders(skewed_jsonl, 3, **kw)
    for a, b in zip(resumed, fresh):
        a.load_state_dict(end)
        b.set_epoch(1)
        n = 0
        for u, v in itertools.zip_longest(a, b):  # one batch of each held at a time
            assert u is not None and v is not None, "the epochs differ in length"
            assert u["input_ids"].tobytes() == v["input_ids"].tobytes()
            assert figures(u) == figures(v)
            n += 1
        assert n > 4


@pytest.fixture(scope="module")
def headed_jsonl(tmp_path_factory):
    """200 documents "<i>xxx..." of 2 to 600 bytes in two files, and each one's tokens (its
    bytes and the end of document) by i."""
    root = tmp_path_factory.mktemp("stream-token-steps-padding")
    rng = np.random.default_rng(3)
    docs, paths = {}, []
    for f in range(2):
        with open(root / f"docs-{f}.jsonl", "w") as out:
            for i in range(f * 100, f * 100 + 100):
                text = f"<{i}>" + "x" * int(rng.integers(2, 600))
                out.write(json.dumps({"text": text}) + "\n")
                docs[i] = list(text.encode()) + [EOS]
        paths.append(str(root / f"docs-{f}.jsonl"))
    return paths, docs


PADDED = dict(max_tokens_per_microbatch=1024, seq_idx=True)


def padded_loaders(paths, world, **kw):
    return stream_loaders(paths, world, tokens_per_step=4096 * world, **PADDED, **kw)


@pytest.mark.parametrize("world", [1, 3])
def test_padding_and_a_row_cap_serve_each_document_once_within_budget_and_cap(headed_jsonl,
                                                                              world):
    # Each piece takes its padded room in its microbatch and a microbatch holds at most CAP
    # documents, as on the indexed path; the step's figures stay unpadded.
    paths, docs = headed_jsonl
    ranks = padded_loaders(paths, world, pad_each_document_to=M, max_documents_per_row=CAP)
    assert len({len(r) for r in ranks}) == 1
    served, capped, padded = {}, 0, 0
    for step in epoch_steps(ranks):
        real = trained = 0
        for per_rank in step:
            for b in per_rank:
                assert b["input_ids"].shape == (1, 1024)
                b["max_seqlen"] = int(np.diff(b["cu_seqlens_padded"]).max())
                b["cu_seqlens_host"] = b["cu_seqlens"]
                check_padded_layout(b, M)  # rooms within the budget, padding untrained
                pieces = pieces_of(b)
                assert 0 < len(pieces) <= CAP
                capped += len(pieces) == CAP
                padded += int(b["cu_seqlens_padded"][-1] - b["cu_seqlens"][-1])
                for tokens in pieces:
                    i = document_of(tokens)
                    assert i not in served, f"document {i} served twice"
                    served[i] = tokens
                    np.testing.assert_array_equal(tokens, docs[i], err_msg=f"document {i}")
                real += sum(len(t) for t in pieces)
                trained += int((b["labels"] != -100).sum())
        assert int(step[0][0]["global_tokens"]) == real
        assert int(step[0][0]["global_trained_tokens"]) == trained
    assert capped > 0 and padded > 0, "the cap and the padding were exercised"
    assert len(served) > 0.6 * len(docs)  # the rest is the epoch-end remainder


def test_context_parallel_shares_gather_back_each_microbatch(headed_jsonl):
    """context_parallel=(2, r) pads to 4: the two shares of each microbatch gather back the whole
    one (pad_each_document_to=4, no CP), odd documents keeping their last token."""
    paths, docs = headed_jsonl
    kw = dict(tokens_per_step=2 * 4096, **PADDED)
    whole = [copied(b) for b in stream_loader(paths, 2, 1, pad_each_document_to=4, **kw)]
    shares = [[copied(b) for b in stream_loader(paths, 2, 1, context_parallel=(2, r), **kw)]
              for r in range(2)]
    check_cp_shares(whole, shares, 1024, docs)


def test_resume_is_bit_exact_with_padding_a_cap_and_context_parallel(headed_jsonl):
    paths, _ = headed_jsonl
    kw = dict(tokens_per_step=3 * 4096, pad_each_document_to=8, max_documents_per_row=4,
              context_parallel=(2, 1), **PADDED)
    check_bit_exact_resume(lambda **more: stream_loader(paths, 3, 2, **dict(kw, **more)), 5)


@pytest.fixture(scope="module")
def chat_stream(tmp_path_factory):
    """A Qwen 2.5 model directory and 160 conversations of 1 to 3 turns."""
    root = tmp_path_factory.mktemp("stream-token-steps-chat")
    model = make_qwen_models(root / "models")["qwen2_5"]
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
    return model, str(write_jsonl(root / "chats.jsonl", rows))


@pytest.mark.parametrize("world", [1, 3])
def test_a_chat_stream_counts_trained_tokens_from_its_loss_mask(chat_stream, world):
    model, jsonl = chat_stream
    ranks = [stoker.Loader(stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=16,
                                         scan_cache=None),
                           tokens_per_step=world * 1000, microbatches=2,
                           max_tokens_per_microbatch=400, world_size=world, rank=r,
                           output="numpy", num_workers=1, seed=1)
             for r in range(world)]
    steps = epoch_steps(ranks)
    assert len(steps) >= 2
    masked = 0
    for step in steps:
        step_masked = 0
        for per_rank in step:
            for mb in per_rank:
                mask = mb["loss_mask"]
                # The trained targets are exactly the loss mask's ones, and fewer than the
                # real tokens (prompts are not trained).
                assert mb["_trained"] == int(mask.sum()) == int((mb["labels"] != -100).sum())
                step_masked += int(mask.sum())
                assert int(mask.sum()) < int((mb["segment_ids"] > 0).sum()) or mask.sum() == 0
            assert figures(per_rank[0])["step_tokens"] == sum(
                int((mb["segment_ids"] > 0).sum()) for mb in per_rank)
        # Every rank's global_trained_tokens (from the pre-scan's per-document counts, no
        # communication) is the sum over all ranks' loss masks of the step.
        for per_rank in step:
            for mb in per_rank:
                assert int(mb["global_trained_tokens"]) == step_masked
        masked += step_masked
    assert masked > 0


def test_a_cached_chat_scan_keeps_each_documents_trained_targets(chat_stream, stoker_cli,
                                                                 tmp_path):
    """`stoker scan` of chat records writes each document's trained targets (header `trained`),
    and a stream that reads its scan from the cache gets the same exact global_trained_tokens."""
    model, jsonl = chat_stream
    cache = tmp_path / "scans"
    r = subprocess.run([stoker_cli, "scan", jsonl, "--tokenizer", str(model),
                        "--scan-cache", str(cache)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (scan,) = list(cache.iterdir())
    data = scan.read_bytes()
    header = json.loads(data.split(b"\n")[1])
    assert header["trained"] == header["documents"] > 0
    assert len(data) == data.index(b"\n", 9) + 1 + 20 * header["documents"] + 8 * header["skipped"]
    ranks = [stoker.Loader(stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=16,
                                         scan_cache=str(cache)),
                           tokens_per_step=2000, microbatches=2, max_tokens_per_microbatch=400,
                           world_size=2, rank=r, output="numpy", num_workers=1, seed=1)
             for r in range(2)]
    steps = epoch_steps(ranks)
    assert len(steps) >= 2
    for step in steps:
        masked = sum(int(mb["loss_mask"].sum()) for per_rank in step for mb in per_rank)
        assert {int(mb["global_trained_tokens"]) for per_rank in step for mb in per_rank} == \
            {masked}
