"""The loader on chat data (docs/chat.md, "Batches" and "Long conversations"): labels shifted by one
and kept only where the target token is trained, a loss_mask aligned with them, long
conversations dropped (or truncated) and counted, exactly once over 3 ranks, and exact resume.
Every batch is checked against the documents' own masks from ``stoker.inspect``, through the
batch's provenance: the test finds the expected labels independently of the loader's code."""

import json
import random
import subprocess

import numpy as np
import pytest

import stoker
from chat_testlib import make_qwen_models, pack, records, write_jsonl

SEQ = 320


def conversations(n, seed=7):
    """n conversations of varied length (1 to 4 turns, some system prompts) plus the sample
    records of every input shape; one of them longer than SEQ tokens."""
    rng = random.Random(seed)
    words = "alpha beta gamma delta rain snow sun wind river stone tree leaf".split()
    say = lambda k: " ".join(rng.choice(words) for _ in range(k))  # noqa: E731
    rows = list(records())
    for _ in range(n):
        msgs = [{"role": "system", "content": say(3)}] if rng.random() < 0.3 else []
        for _ in range(rng.randint(1, 3)):
            msgs += [{"role": "user", "content": say(rng.randint(1, 8))},
                     {"role": "assistant", "content": say(rng.randint(1, 10))}]
        rows.append({"messages": msgs})
    rows.append({"messages": [{"role": "user", "content": say(5)},
                              {"role": "assistant", "content": say(200)}]})
    return rows


@pytest.fixture(scope="module")
def chat_source(tmp_path_factory):
    """The conversations as JSONL, and the model directory that renders them."""
    base = tmp_path_factory.mktemp("chat-source")
    model = make_qwen_models(base / "models")["qwen2_5"]
    return write_jsonl(base / "chats.jsonl", conversations(120)), model


@pytest.fixture(scope="module")
def chat_dataset(stoker_cli, chat_source, tmp_path_factory):
    jsonl, model = chat_source
    out = tmp_path_factory.mktemp("chat-loader") / "sft"
    r = pack(stoker_cli, jsonl, "-o", out, "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    docs = [stoker.inspect(out, document=i) for i in range(stoker.inspect(out)["documents"])]
    return out, docs


def expected_row(row_pieces, docs, seq_len):
    """input_ids, labels and loss_mask of one row, from the documents and their masks: label t
    is the next token of the same document where that token is trained, else -100."""
    ids = np.zeros(seq_len, dtype=np.int64)
    labels = np.full(seq_len, -100, dtype=np.int64)
    for p in row_pieces:
        d = docs[p["document"]]
        tokens, mask = d["tokens"], d["loss_mask"]
        at, off, n = p["row_offset"], p["offset"], p["length"]
        ids[at:at + n] = tokens[off:off + n]
        for t in range(n):
            nxt = off + t + 1
            if nxt < len(tokens) and mask[nxt]:
                labels[at + t] = tokens[nxt]
    return ids, labels, (labels != -100).astype(np.int64)


def check_batch(batch, docs, seq_len):
    assert batch["labels"].shape == batch["loss_mask"].shape == batch["input_ids"].shape
    for r, pieces in enumerate(batch["provenance"]):
        ids, labels, mask = expected_row(pieces, docs, seq_len)
        np.testing.assert_array_equal(batch["input_ids"][r][:len(ids)], ids)
        np.testing.assert_array_equal(batch["labels"][r], labels)
        np.testing.assert_array_equal(batch["loss_mask"][r], mask)
    return int(batch["loss_mask"].sum())


def test_labels_follow_the_mask_at_every_boundary(chat_dataset):
    out, docs = chat_dataset
    loader = stoker.Loader(out, seq_len=SEQ, batch_size=4, pack="bestfit", output="numpy",
                           num_workers=2, provenance=True, remainder="pad")
    trained = 0
    seen = set()
    for batch in loader:
        trained += check_batch(batch, docs, SEQ)
        for pieces in batch["provenance"]:
            for p in pieces:
                assert p["offset"] == 0 and p["length"] == len(docs[p["document"]]["tokens"])
                seen.add(p["document"])
    stats = loader.stats()
    assert stats["trained_tokens"] == trained > 0
    # The conversations longer than SEQ (the long one, the one with tool definitions) are
    # dropped, never split, and counted.
    long_docs = {i for i, d in enumerate(docs) if len(d["tokens"]) > SEQ}
    assert len(long_docs) >= 1 and not (long_docs & seen)
    assert stats["long_documents_dropped"] == len(long_docs)
    assert seen == set(range(len(docs))) - long_docs
    # Boundaries the check above covered: a turn's first trained token (its label sits on the
    # token before it, untrained), the end-of-turn token, and a document's last token (-100).
    first = next(i for i, m in enumerate(docs[0]["loss_mask"]) if m)
    assert first > 0 and docs[0]["loss_mask"][first - 1] == 0


def test_chat_packs_carry_the_kernel_fields(chat_dataset):
    """pad_each_document_to and max_documents_per_row on chat data: the same labels and loss mask
    at each conversation's padded offset, the padding untrained, every conversation once."""
    out, docs = chat_dataset
    loader = stoker.Loader(out, seq_len=SEQ, batch_size=4, pack="bestfit", output="numpy",
                           num_workers=2, provenance=True, remainder="pad",
                           pad_each_document_to=8, max_documents_per_row=3)
    seen = set()
    for batch in loader:
        check_batch(batch, docs, SEQ)  # row_offset counts the padded room
        cu, cup = batch["cu_seqlens"], batch["cu_seqlens_padded"]
        assert cu.shape == cup.shape == (4 * 4 + 1,) and cup[-1] == 4 * SEQ
        assert np.all(np.diff(cup) % 8 == 0)
        for pieces in batch["provenance"]:
            assert len(pieces) <= 3
            seen.update(p["document"] for p in pieces)
    long_docs = {i for i, d in enumerate(docs) if len(d["tokens"]) > SEQ}
    assert seen == set(range(len(docs))) - long_docs


def test_truncate_keeps_the_head_with_its_next_label(chat_dataset):
    out, docs = chat_dataset
    long_docs = {i for i, d in enumerate(docs) if len(d["tokens"]) > SEQ}
    loader = stoker.Loader(out, seq_len=SEQ, batch_size=4, pack="bestfit", output="numpy",
                           num_workers=1, provenance=True, long_documents="truncate",
                           shuffle="none")
    # A head keeps a conversation only with a trained target among tokens 1..SEQ; the one with
    # the tool definitions has none there (its answer starts past SEQ) and is left out.
    kept = {i for i in long_docs if any(docs[i]["loss_mask"][1:SEQ + 1])}
    assert kept and kept != long_docs
    found = set()
    for batch in loader:
        check_batch(batch, docs, SEQ)
        for pieces in batch["provenance"]:
            for p in pieces:
                if p["document"] in long_docs:
                    assert p["offset"] == 0 and p["length"] == SEQ
                    found.add(p["document"])
    assert found == kept
    stats = loader.stats()
    assert stats["long_documents_truncated"] == len(kept)
    assert stats["long_documents_dropped"] == len(long_docs - kept)
    with pytest.raises(ValueError, match="long-documents"):
        stoker.Loader(out, seq_len=SEQ, long_documents="chop")


def test_three_ranks_see_every_conversation_once_and_resume_exactly(chat_dataset):
    out, docs = chat_dataset
    kw = dict(seq_len=SEQ, batch_size=2, pack="bestfit", output="numpy", num_workers=1,
              provenance=True, world_size=3, seed=3)
    seen, rows = [], 0
    for rank in range(3):
        for batch in stoker.Loader(out, rank=rank, **kw):
            check_batch(batch, docs, SEQ)
            seen += [p["document"] for row in batch["provenance"] for p in row]
            rows += len(batch["provenance"])
    # No conversation twice, none of the long ones, and only drop_last's rows (fewer than one
    # global batch of 6 rows) missing; the three ranks took the same number of steps.
    short = {i for i, d in enumerate(docs) if len(d["tokens"]) <= SEQ}
    assert len(seen) == len(set(seen)) and set(seen) <= short
    whole = stoker.Loader(out, **dict(kw, world_size=1, rank=0, remainder="pad", batch_size=1))
    all_rows = sum(len(b["provenance"]) for b in whole)
    assert rows % 6 == 0 and all_rows - 6 < rows <= all_rows
    # Exact resume mid-epoch: the batches after a restored state equal the uninterrupted ones.
    one = dict(kw, world_size=1, remainder="drop_last")
    keys = ("input_ids", "labels", "loss_mask", "position_ids", "cu_seqlens")
    copy = lambda b: {k: b[k].copy() for k in keys}  # noqa: E731  (batches hold ring slots)
    full = [copy(b) for b in stoker.Loader(out, **one)]
    first = stoker.Loader(out, **one)
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    resumed = stoker.Loader(out, **one)
    resumed.load_state_dict(json.loads(json.dumps(state)))
    rest = [copy(b) for b in resumed]
    assert len(rest) == len(full) - 3
    for a, b in zip(rest, full[3:]):
        for key in keys:
            np.testing.assert_array_equal(a[key], b[key])


def test_plan_stats_report_the_trained_share(stoker_cli, chat_dataset):
    out, docs = chat_dataset
    r = subprocess.run([stoker_cli, "plan", str(out), "--seq-len", str(SEQ), "--batch-size", "4",
                        "--pack", "bestfit", "--stats", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stats = json.loads(r.stdout)
    d = stats["datasets"][0]
    # Trained targets, counted here from the masks: tokens 1.. of each planned conversation.
    targets = sum(sum(doc["loss_mask"][1:]) for doc in docs if len(doc["tokens"]) <= SEQ)
    assert d["loss_mask"] and d["trained_targets"] == targets
    assert d["long_documents_dropped"] == sum(len(doc["tokens"]) > SEQ for doc in docs) > 0
    real = stats["packing"]["real_tokens"]
    share = stats["packing"]["trained_token_share"]
    assert 0 < share < stats["packing"]["real_token_share"]
    assert share == pytest.approx(stats["packing"]["real_token_share"] * targets
                                  / sum(len(doc["tokens"]) for doc in docs
                                        if len(doc["tokens"]) <= SEQ))
    assert real > 0
    # stoker.plan plans chat data as the CLI and the loader do (long conversations dropped).
    mine = stoker.plan(out, SEQ, 4, pack="bestfit").stats(0)
    assert mine["fingerprint"] == stats["fingerprint"]
    assert mine["packing"] == stats["packing"]
    r = subprocess.run([stoker_cli, "plan", str(out), "--seq-len", str(SEQ), "--batch-size", "4",
                        "--pack", "bestfit", "--stats"], capture_output=True, text=True)
    assert "trained tokens" in r.stdout and "left out" in r.stdout, r.stdout
    # The dropped conversations are counted as left out, not as empty documents, and no token
    # count of truncation appears where only --pack pad truncates.
    dropped = d["long_documents_dropped"]
    assert f"{dropped} document(s) longer than --seq-len left out" in r.stdout, r.stdout
    assert "empty document" not in r.stdout and "tokens truncated" not in r.stdout, r.stdout


def test_bench_reports_the_real_and_trained_shares(stoker_cli, chat_dataset):
    out, docs = chat_dataset
    r = subprocess.run([stoker_cli, "bench", str(out), "--seq-len", str(SEQ), "--batch-size", "2",
                        "--pack", "bestfit", "--shuffle", "none", "--num-workers", "1",
                        "--warmup-batches", "0", "--batches", "4", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert 0 < j["trained_token_share"] < j["real_token_share"] <= 1
    # The same four batches from the Python loader give the same shares (bench's warm-up is at
    # least the first batch).
    assert j["warmup_batches"] == 1
    loader = stoker.Loader(out, seq_len=SEQ, batch_size=2, pack="bestfit", shuffle="none",
                           num_workers=1, output="numpy")
    it = iter(loader)
    trained = real = 0
    next(it)
    for _ in range(4):
        b = next(it)
        trained += int(b["loss_mask"].sum())
        real += int((b["segment_ids"] > 0).sum())
    positions = 4 * 2 * SEQ
    assert j["trained_token_share"] == pytest.approx(trained / positions)
    assert j["real_token_share"] == pytest.approx(real / positions)


def test_a_stream_of_chat_records_gives_the_packed_conversations(chat_source, chat_dataset):
    """stoker.Stream over the JSONL renders, encodes and masks each conversation as pack does:
    every conversation of a stream batch is a packed document, with that document's labels."""
    jsonl, model = chat_source
    out, docs = chat_dataset
    by_tokens = {tuple(d["tokens"]): d for d in docs}
    stream = stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=1)
    loader = stoker.Loader(stream, seq_len=SEQ, batch_size=2, pack="bestfit", output="numpy",
                           num_workers=1)
    seen = []
    for batch in loader:
        for r in range(batch["input_ids"].shape[0]):
            seg = batch["segment_ids"][r]
            for s in sorted(set(seg.tolist()) - {0}):
                at = np.nonzero(seg == s)[0]
                ids = tuple(batch["input_ids"][r][at].tolist())
                assert ids in by_tokens, "a streamed conversation that pack did not write"
                mask = by_tokens[ids]["loss_mask"]
                labels = [ids[t + 1] if mask[t + 1] else -100 for t in range(len(ids) - 1)]
                labels.append(-100)
                assert batch["labels"][r][at].tolist() == labels
                assert batch["loss_mask"][r][at].tolist() == [int(x != -100) for x in labels]
                seen.append(ids)
    short = {t for t in by_tokens if len(t) <= SEQ}
    # Never a long conversation, never one twice; equal steps may leave the last rows out.
    assert len(seen) == len(set(seen)) and set(seen) <= short
    assert len(seen) >= 0.8 * len(short)
    with pytest.raises(ValueError, match="concat"):
        stoker.Loader(stoker.Stream([jsonl], tokenizer=str(model)), seq_len=SEQ, pack="concat")
    with pytest.raises(ValueError, match="concat"):
        stoker.Loader(out, seq_len=SEQ, pack="concat")
    with pytest.raises(ValueError, match="truncate"):
        stoker.Loader(stoker.Stream([jsonl], tokenizer=str(model)), seq_len=SEQ, pack="bestfit",
                      long_documents="truncate")


def test_a_chat_stream_resumes_with_the_same_labels(chat_source):
    """A stream's checkpoint holds references, never text: the restored stream re-reads and
    re-renders the conversations in its buffer and gives the same labels and masks."""
    jsonl, model = chat_source
    kw = dict(seq_len=SEQ, batch_size=2, pack="bestfit", output="numpy", num_workers=1)
    keys = ("input_ids", "labels", "loss_mask")
    copy = lambda b: {k: b[k].copy() for k in keys}  # noqa: E731
    stream = lambda: stoker.Stream([jsonl], tokenizer=str(model), shuffle_buffer=16)  # noqa: E731
    full = [copy(b) for b in stoker.Loader(stream(), **kw)]
    first = stoker.Loader(stream(), **kw)
    it = iter(first)
    for _ in range(4):
        next(it)
    state = json.loads(json.dumps(first.state_dict()))
    resumed = stoker.Loader(stream(), **kw)
    resumed.load_state_dict(state)
    rest = [copy(b) for b in resumed]
    assert len(rest) == len(full) - 4 > 0
    for a, b in zip(rest, full[4:]):
        for k in keys:
            np.testing.assert_array_equal(a[k], b[k])
    assert sum(int(b["loss_mask"].sum()) for b in rest) > 0


def test_the_cli_streams_chat_records_with_their_scans(stoker_cli, chat_source, tmp_path):
    """`stoker scan` of chat records writes the scans a chat stream finds (same identity), and
    `bench --stream` reports the trained share; the chat flags need --stream."""
    jsonl, model = chat_source
    scans = tmp_path / "scans"
    r = subprocess.run([stoker_cli, "scan", str(jsonl), "--tokenizer", str(model),
                        "--scan-cache", str(scans)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([stoker_cli, "bench", "--stream", str(jsonl), "--tokenizer", str(model),
                        "--scan-cache", str(scans), "--pack", "bestfit", "--seq-len", str(SEQ),
                        "--batch-size", "2", "--batches", "3", "--warmup-batches", "1", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "1 of 1 file(s) from scan files" in r.stderr, r.stderr
    j = json.loads(r.stdout)
    assert 0 < j["trained_token_share"] < j["real_token_share"]
    r = subprocess.run([stoker_cli, "bench", str(jsonl), "--train-on", "last"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "--train-on applies to streams only" in r.stderr, r.stderr
