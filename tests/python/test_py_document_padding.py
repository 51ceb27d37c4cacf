"""pad_each_document_to and max_documents_per_row (rows of PlanOptions' table): every document in a
packed row padded to a multiple of m, cu_seqlens_padded beside cu_seqlens, padding untrained, the
plan counting the padding; at most n documents per row and cu_seqlens of fixed capacity. On real
packed batches, with resume, provenance and the CLI."""

import json
import os

import numpy as np
import pytest

import stoker

SEQ = 128
M = 4  # 2 * cp for cp = 2: TransformerEngine #1930's case


@pytest.fixture(scope="module")
def docs_dataset(tmp_path_factory):
    """Documents of odd and even lengths (3..100 bytes), each naming itself, packed with the
    bytes tokenizer: a segment's tokens decode back to the document they came from."""
    root = tmp_path_factory.mktemp("padding")
    rng = np.random.default_rng(7)
    texts = []
    for i in range(300):
        head = f"<{i}>"
        texts.append(head + "x" * int(rng.integers(0, 100 - len(head))))
    (root / "docs.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    stoker.pack(root / "docs.jsonl", root / "ds", "bytes")
    return str(root / "ds"), texts


def copied(batch):
    return {k: v.copy() if hasattr(v, "copy") else v for k, v in batch.items()}


def segments(batch):
    """(real tokens, padded room) of every segment, checking the layout on the way."""
    cu, cup = np.asarray(batch["cu_seqlens"]), np.asarray(batch["cu_seqlens_padded"])
    ids = np.asarray(batch["input_ids"]).reshape(-1)
    labels = np.asarray(batch["labels"]).reshape(-1)
    seg_idx = np.asarray(batch["seq_idx"]).reshape(-1)
    B, S = np.asarray(batch["input_ids"]).shape
    assert cu.dtype == cup.dtype == np.int32 and cu.shape == cup.shape
    assert cup[0] == 0 and cup[-1] == B * S
    np.testing.assert_array_equal(batch.cu_seqlens_padded_host, cup)
    np.testing.assert_array_equal(seg_idx, np.repeat(np.arange(len(cup) - 1), np.diff(cup)))
    assert batch.max_seqlen == int(np.diff(cup).max())
    out = []
    for k in range(len(cu) - 1):
        real, room = cu[k + 1] - cu[k], cup[k + 1] - cup[k]
        assert room % M == 0 and 0 <= room - real < M
        start = cup[k]
        if room == 0:  # max_documents_per_row: the fixed capacity's unused entries
            assert real == 0 and start == B * S
            continue
        if ids[start] == 0:  # a padding run at a row's end (no document starts with byte 0)
            assert real == room and np.all(labels[start:start + room] == -100)
            continue
        assert np.all(labels[start + real:start + room] == -100)  # the padding is untrained
        assert np.all(ids[start + real:start + room] == 0)
        if real > 1:  # labels are the next token within the document
            np.testing.assert_array_equal(labels[start:start + real - 1],
                                          ids[start + 1:start + real])
        out.append(ids[start:start + real])
    return out


def test_every_document_is_padded_and_every_token_kept(docs_dataset):
    path, texts = docs_dataset
    kw = dict(seq_len=SEQ, batch_size=1, pack="bestfit", num_workers=2, output="numpy")
    seen = []
    padded_rows = 0
    with stoker.Loader(path, pad_each_document_to=M, seq_idx=True, **kw) as loader:
        for batch in loader:
            for tokens in segments(batch):
                tokens = tokens[tokens < 256]  # the bytes tokenizer's end of document: 256
                if len(tokens):
                    seen.append(bytes(tokens.astype(np.uint8)).decode())
            padded_rows += 1
    # batch_size 1 drops nothing: every document exactly once, whole (odd lengths included).
    assert sorted(seen) == sorted(texts)
    plain = stoker.Loader(path, **kw)
    assert padded_rows >= sum(1 for _ in plain)  # the padding costs rows, never tokens
    first = next(iter(plain))
    assert "cu_seqlens_padded" not in first and first.cu_seqlens_padded_host is None


def test_at_most_n_documents_per_row_and_a_fixed_cu_seqlens(docs_dataset):
    path, texts = docs_dataset
    B, N = 2, 2
    kw = dict(seq_len=SEQ, batch_size=B, pack="bestfit", num_workers=2, output="numpy",
              remainder="pad", seq_idx=True)
    seen, steps = [], 0
    with stoker.Loader(path, max_documents_per_row=N, pad_each_document_to=M, **kw) as loader:
        for batch in loader:
            steps += 1
            cu = np.asarray(batch["cu_seqlens"])
            assert cu.shape == (B * (N + 1) + 1,)  # every batch: the same shape
            assert np.all(np.diff(cu) >= 0)
            np.testing.assert_array_equal(batch.cu_seqlens_host, cu)
            for tokens in segments(batch):
                tokens = tokens[tokens < 256]
                if len(tokens):
                    seen.append(bytes(tokens.astype(np.uint8)).decode())
            for row in batch["segment_ids"]:
                assert len(set(row.tolist()) - {0}) <= N  # a row never holds more documents
    # remainder="pad" repeats rows of the next epoch: every document at least once.
    assert set(seen) == set(texts)
    most = 0
    with stoker.Loader(path, pad_each_document_to=M, **kw) as plain:
        for plain_steps, batch in enumerate(plain, 1):
            most = max(most, *(len(set(row.tolist()) - {0}) for row in batch["segment_ids"]))
    assert most > N and steps > plain_steps  # without the limit rows hold more; closed: more rows


OPTIONS = [dict(pad_each_document_to=M), dict(max_documents_per_row=2),
           dict(pad_each_document_to=8, max_documents_per_row=3, seq_idx=True),
           dict(pad_each_document_to=8, max_documents_per_row=3, seq_idx=True,
                context_parallel=(2, 1))]


@pytest.mark.parametrize("options", OPTIONS, ids=["padded", "max_docs", "both", "all_with_cp"])
def test_resume_and_provenance_hold_with_the_options(docs_dataset, options):
    path, _ = docs_dataset
    kw = dict(seq_len=SEQ, batch_size=2, pack="bestfit", num_workers=2, output="numpy",
              provenance=True, **options)
    m = options.get("pad_each_document_to", 1)
    with stoker.Loader(path, **kw) as loader:
        batches = [(copied(b), b.state_after) for b in loader]
    assert len(batches) > 6
    with stoker.Loader(path, **kw) as resumed:
        resumed.load_state_dict(batches[3][1])
        rest = [copied(b) for b in resumed]
    assert len(rest) == len(batches) - 4
    for got, (want, _) in zip(rest, batches[4:]):
        assert set(got) == set(want)
        for key in set(want) - {"provenance"}:
            np.testing.assert_array_equal(got[key], want[key])
        assert got["provenance"] == want["provenance"]
    if "context_parallel" in options:
        return  # a CP share holds parts of the row: offsets are the whole row's (checked above)
    # Provenance places each piece at its padded offset in the row.
    for batch, _ in batches:
        ids = batch["input_ids"]
        for r, row in enumerate(batch["provenance"]):
            at = 0
            for piece in row:
                assert piece["row_offset"] == at
                assert ids[r, at] != 0  # a document starts there, not padding
                at += -(-piece["length"] // m) * m


def test_a_checkpoint_of_another_padding_is_refused_naming_it(docs_dataset):
    path, _ = docs_dataset
    kw = dict(seq_len=SEQ, batch_size=2, pack="bestfit", num_workers=1, output="numpy")
    with stoker.Loader(path, pad_each_document_to=M, **kw) as loader:
        state = next(iter(loader)).state_after
    other = stoker.Loader(path, pad_each_document_to=8, **kw)
    with pytest.raises(Exception, match=r"pad_each_document_to \(4 in the checkpoint, 8 here\)"):
        other.load_state_dict(state)


def test_bad_padding_is_refused_clearly(docs_dataset):
    path, _ = docs_dataset
    with pytest.raises(ValueError, match="pad_each_document_to=4 needs pack='bestfit' or 'pad'"):
        stoker.Loader(path, seq_len=SEQ, batch_size=1, pad_each_document_to=M)  # pack concat
    with pytest.raises(ValueError, match="multiple of it"):
        stoker.Loader(path, seq_len=SEQ, batch_size=1, pack="pad", pad_each_document_to=48)
    # A stream packs the padding too (test_stream_kernel_fields.py), under the same conditions.
    stream = stoker.Stream(os.path.join(os.path.dirname(path), "docs.jsonl"), steps_per_epoch=2)
    with pytest.raises(ValueError, match="stream: pad_each_document_to=4 needs pack='bestfit'"):
        stoker.Loader(stream, seq_len=SEQ, batch_size=1, pad_each_document_to=M)  # pack concat
    with pytest.raises(ValueError, match="stream: max_documents_per_row=2 needs pack='bestfit'"):
        stoker.Loader(stream, seq_len=SEQ, batch_size=1, max_documents_per_row=2)
    stoker.Loader(stream, seq_len=SEQ, batch_size=1, pack="bestfit", pad_each_document_to=M).close()


def test_the_plan_and_bench_take_the_flag(docs_dataset, run_stoker):
    path, _ = docs_dataset
    p = run_stoker("plan", path, "--seq-len", SEQ, "--batch-size", 2, "--pack", "bestfit",
                   "--pad-each-document-to", M)
    assert p.returncode == 0, p.stderr
    p = run_stoker("plan", path, "--seq-len", SEQ, "--batch-size", 2, "--pack", "bestfit",
                   "--max-documents-per-row", 2)
    assert p.returncode == 0, p.stderr
    p = run_stoker("plan", path, "--seq-len", SEQ, "--batch-size", 2,
                   "--pad-each-document-to", M)
    assert p.returncode != 0 and "pad_each_document_to=4 needs pack" in p.stderr
    p = run_stoker("bench", path, "--seq-len", SEQ, "--batch-size", 2, "--pack", "bestfit",
                   "--pad-each-document-to", M, "--batches", 3, "--num-workers", 1)
    assert p.returncode == 0, p.stderr
