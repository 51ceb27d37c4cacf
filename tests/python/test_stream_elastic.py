"""Elastic resume of a stoker.Stream: every rank's state_dict() from W ranks, taken at a random
step with the shuffle buffers full, resumes on W' ranks (simulated in one process, one Loader per
rank). Checked through batch["provenance"]: over the whole epoch, before and after, no token of any
document comes twice, what never comes is the small epoch-end remainder, every new rank takes the
same number of steps, and the epoch after is the new world's own."""

import json

import numpy as np
import pytest

import stoker
from test_stream_loader import write_corpus


def open_world(paths, world, pack):
    stream = stoker.Stream([str(p) for p in paths], tokenizer="bytes", shuffle_buffer=48,
                           scan_cache=None)
    return [stoker.Loader(stream, seq_len=64, batch_size=2, num_workers=2, pack=pack, seed=7,
                          bestfit_window=8,
                          rank=r, world_size=world, output="numpy", pin_memory=False,
                          provenance=True) for r in range(world)]


def take(loader, n, cover):
    """Up to n batches of the current epoch; records each epoch-0 piece's tokens in cover."""
    got = 0
    for batch in loader:
        for row in batch["provenance"]:
            for p in row:
                if p["stream_epoch"] != 0:
                    continue  # drawn from the next epoch's stream: seen again there
                key = (p["source"], p["byte_offset"])
                cover.setdefault(key, []).append((p["offset"], p["offset"] + p["length"]))
        got += 1
        if got == n:
            break
    return got


def token_counts(cover):
    twice, tokens = 0, 0
    for spans in cover.values():
        n = max(e for _, e in spans)
        c = np.zeros(n, np.int32)
        for b, e in spans:
            c[b:e] += 1
        twice += int((c > 1).sum())
        tokens += int(c.sum())
    return twice, tokens


@pytest.mark.parametrize("pack", ["concat", "bestfit"])
@pytest.mark.parametrize("old,new", [(4, 3), (3, 4), (2, 1)])
def test_elastic_resume_loses_no_document_and_repeats_none(tmp_path, pack, old, new):
    paths = write_corpus(tmp_path, [300, 40, 0, 200, 90, 17])
    docs = 300 + 40 + 200 + 90 + 17
    total_tokens = sum(len(json.loads(line)["text"].encode()) + 1  # + EOS
                       for p in paths for line in open(p))
    rng = np.random.default_rng(old * 10 + new)
    cover = {}
    loaders = open_world(paths, old, pack)
    steps = len(loaders[0])
    k = int(rng.integers(3, steps // 2))
    for loader in loaders:
        assert take(loader, k, cover) == k
    states = stoker.gather_state_dicts(loaders[0])  # no process group: the loader's own
    assert len(states) == 1
    states = [loader.state_dict() for loader in loaders]  # what gather_state_dicts gathers
    for loader in loaders:
        loader.close()
    resumed = open_world(paths, new, pack)
    for loader in resumed:
        loader.load_state_dict(states)
    left = {len(loader) for loader in resumed}
    assert len(left) == 1, "every new rank has the same steps in the epoch"
    taken = [take(loader, 10 ** 9, cover) for loader in resumed]
    assert len(set(taken)) == 1 and taken[0] == left.pop() - k, taken
    twice, tokens = token_counts(cover)
    assert twice == 0, f"{twice} tokens delivered twice in the epoch"
    # The remainder: what the new world's fuller ranks hold beyond its smallest one, and the
    # last partial rows; a fresh epoch on these ranks leaves as much.
    assert len(cover) >= docs * 0.9, (len(cover), docs)
    assert tokens >= total_tokens * 0.9, (tokens, total_tokens)
    # The next epoch is the new world's own: equal to a fresh loader's epoch 1.
    fresh = open_world(paths, new, pack)
    for a, b in zip(resumed, fresh):
        b.set_epoch(1)
        x, y = next(iter(a)), next(iter(b))
        assert x["input_ids"].tobytes() == y["input_ids"].tobytes()
        assert x["provenance"] == y["provenance"]
    for loader in resumed + fresh:
        loader.close()


def test_a_stream_state_of_another_world_alone_is_refused(tmp_path):
    paths = write_corpus(tmp_path, [200, 100])
    old = open_world(paths, 2, "concat")
    for loader in old:
        take(loader, 4, {})
    states = [loader.state_dict() for loader in old]
    new = open_world(paths, 3, "concat")
    with pytest.raises(ValueError, match="every old rank"):
        new[0].load_state_dict(states[0])
    with pytest.raises(ValueError, match="every one of the 2 ranks"):
        new[0].load_state_dict(states[:1] + states[:1] + states[:1])
    # The same world given the list: each rank takes its own entry, bitwise.
    again = open_world(paths, 2, "concat")
    for loader, want in zip(again, old):
        loader.load_state_dict(states)
        assert next(iter(loader))["input_ids"].tobytes() == next(iter(want))["input_ids"].tobytes()
    for loader in old + new + again:
        loader.close()
