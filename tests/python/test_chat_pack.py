"""`stoker pack` on chat data (docs/chat.md): conversations rendered by the model's own template,
their ids and loss masks stored beside the tokens, and `inspect`, `verify` and `merge` carrying
the mask. The masks are checked against transformers' ``return_assistant_tokens_mask`` on a
template with generation markers, and against ``stoker.Tokenizer.apply_chat_template`` (itself
checked against transformers in test_chat_template.py) on one without."""

import json
import subprocess

import pytest

import stoker
from chat_testlib import make_qwen_models, pack, records, write_jsonl


@pytest.fixture(scope="module")
def qwen_models(tmp_path_factory):
    return make_qwen_models(tmp_path_factory.mktemp("chat-models"))


def test_packed_ids_and_masks_equal_transformers(stoker_cli, qwen_models, tmp_path):
    from transformers import PreTrainedTokenizerFast

    model = qwen_models["qwen3_training"]
    config = json.loads((model / "tokenizer_config.json").read_text(encoding="utf-8"))
    hf = PreTrainedTokenizerFast(tokenizer_file=str(model / "tokenizer.json"),
                                 eos_token="<|im_end|>", chat_template=config["chat_template"])
    parts = [{"type": "text", "text": "Part one."}, {"type": "text", "text": "Two."}]
    rows = [r for r in records() if "messages" in r]
    rows.append({"messages": [{"role": "user", "content": parts},
                              {"role": "assistant", "content": parts[:1]}]})
    src = write_jsonl(tmp_path / "chats.jsonl", rows)
    out = tmp_path / "sft"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counters"]["documents"] == len(rows)
    trained = 0
    for i, row in enumerate(rows):
        doc = stoker.inspect(out, document=i)
        want = hf.apply_chat_template(row["messages"], tools=row.get("tools"), tokenize=True,
                                      return_dict=True, return_assistant_tokens_mask=True)
        # transformers reads control-token text in content as control tokens unless sanitized
        # (and then gives no mask): stoker always reads it as text.
        ids = hf.apply_chat_template(row["messages"], tools=row.get("tools"), tokenize=True,
                                     sanitize_control_tokens=True)
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        assert doc["tokens"] == list(ids), i
        if "<|im_" not in json.dumps(row):
            assert doc["tokens"] == list(want["input_ids"]), i
            assert doc["loss_mask"] == list(want["assistant_masks"]), i
        assert doc["trained_tokens"] == sum(doc["loss_mask"]) > 0
        trained += doc["trained_tokens"]
    assert manifest["loss_mask"] == {"dataset": "loss_mask", "trained_tokens": trained}
    # The user's "<|im_end|>" text stays text: the conversation has one <|im_end|> per turn.
    im_end = hf.convert_tokens_to_ids("<|im_end|>")
    assert stoker.inspect(out, document=3)["tokens"].count(im_end) == 2
    summary = stoker.inspect(out)
    assert summary["trained_tokens"] == trained
    assert 0 < summary["trained_share"] < 1


def test_every_record_shape_packs_as_the_tokenizer_encodes_it(stoker_cli, qwen_models, tmp_path):
    """No generation markers: the spans come from the rule of docs/chat.md. prompt + completion
    records train the completion by default, messages every assistant turn."""
    model = qwen_models["qwen2_5"]
    rows = records()
    out = tmp_path / "sft"
    r = pack(stoker_cli, write_jsonl(tmp_path / "chats.jsonl", rows), "-o", out,
             "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    tok = stoker.Tokenizer(model)
    for i, row in enumerate(rows):
        train_on = "completion" if "prompt" in row else "assistant"
        ids, mask = tok.apply_chat_template(row, train_on=train_on)
        doc = stoker.inspect(out, document=i)
        assert doc["tokens"] == list(ids), i
        assert doc["loss_mask"] == list(mask), i
    # --train-on last trains only the final assistant turn.
    r = pack(stoker_cli, write_jsonl(tmp_path / "multi.jsonl", [rows[1]]), "-o",
             tmp_path / "last", "--tokenizer", model, "--train-on", "last")
    assert r.returncode == 0, r.stderr
    ids, mask = tok.apply_chat_template(rows[1], train_on="last")
    assert stoker.inspect(tmp_path / "last", document=0)["loss_mask"] == list(mask)
    assert 0 < sum(mask) < sum(tok.apply_chat_template(rows[1])[1])


def test_bad_records_name_the_line_or_are_counted(stoker_cli, qwen_models, tmp_path):
    model = qwen_models["qwen2_5"]
    good = {"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]}
    bad = [
        ({"text": "no conversation", "prompt": "only a prompt"}, "conversation"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "wizard"),
        ({"messages": [{"role": "user", "content": 7}]}, "content"),
        ({"messages": [{"role": "user", "content": "Q"}, {"role": "assistant"}]}, "assistant"),
    ]
    for k, (row, word) in enumerate(bad):
        src = write_jsonl(tmp_path / f"bad{k}.jsonl", [good, row, good])
        r = pack(stoker_cli, src, "-o", tmp_path / f"out{k}", "--tokenizer", model,
                 "--train-on", "assistant")
        assert r.returncode == 2, (row, r.stderr)
        assert f"bad{k}.jsonl:2" in r.stderr and word in r.stderr, r.stderr
        assert not (tmp_path / f"out{k}" / "manifest.json").exists()
    # Under --on-error skip they are counted; a conversation with nothing to train is dropped.
    rows = [good] + [row for row, _ in bad] + [{"messages": [{"role": "user", "content": "Q"}]}]
    out = tmp_path / "skipped"
    r = pack(stoker_cli, write_jsonl(tmp_path / "mixed.jsonl", rows), "-o", out, "--tokenizer",
             model, "--train-on", "assistant", "--on-error", "skip")
    assert r.returncode == 0, r.stderr
    counters = json.loads((out / "manifest.json").read_text())["counters"]
    assert counters["documents"] == 1
    assert counters["bad_lines_skipped"] == len(bad)
    assert counters["untrained_conversations_skipped"] == 1


def test_chat_field_names_the_conversation(stoker_cli, qwen_models, tmp_path):
    """--chat-field reads the conversation from a field of another name: the same ids and masks
    as the same messages under "messages"; a record without the field is a clear error."""
    model = qwen_models["qwen2_5"]
    convs = [r["messages"] for r in records() if "messages" in r]
    plain, named = tmp_path / "plain", tmp_path / "named"
    r = pack(stoker_cli, write_jsonl(tmp_path / "m.jsonl", [{"messages": c} for c in convs]),
             "-o", plain, "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    rows = [{"dialogue": c, "messages": "not this one", "id": k} for k, c in enumerate(convs)]
    r = pack(stoker_cli, write_jsonl(tmp_path / "d.jsonl", rows), "-o", named, "--tokenizer",
             model, "--chat-field", "dialogue")
    assert r.returncode == 0, r.stderr
    for i in range(len(convs)):
        assert stoker.inspect(named, document=i) == stoker.inspect(plain, document=i)
    shared = [{"turns": [{"from": "human", "value": "Hey"}, {"from": "gpt", "value": "Hi!"}]}]
    out = tmp_path / "sharegpt"
    stoker.pack(write_jsonl(tmp_path / "s.jsonl", shared), out, tokenizer=str(model),
                chat_field="turns")
    assert stoker.inspect(out, document=0)["trained_tokens"] > 0
    r = pack(stoker_cli, write_jsonl(tmp_path / "x.jsonl", [{"messages": convs[0]}]), "-o",
             tmp_path / "x", "--tokenizer", model, "--chat-field", "dialogue")
    assert r.returncode == 2 and "x.jsonl:1" in r.stderr and "dialogue" in r.stderr, r.stderr


def test_template_errors_are_clear(stoker_cli, qwen_models, tmp_path):
    model = qwen_models["qwen2_5"]
    rows = [{"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}]}]
    src = write_jsonl(tmp_path / "chats.jsonl", rows)
    raising = tmp_path / "raising.jinja"
    raising.write_text("{{ raise_exception('only system prompts, please') }}")
    r = pack(stoker_cli, src, "-o", tmp_path / "a", "--tokenizer", model, "--chat-template",
             raising)
    assert r.returncode == 2 and "only system prompts, please" in r.stderr, r.stderr
    assert "chats.jsonl:1" in r.stderr
    broken = tmp_path / "broken.jinja"
    broken.write_text("line one\n{% for m in messages %}\n{{ m.content }}\n")
    r = pack(stoker_cli, src, "-o", tmp_path / "b", "--tokenizer", model, "--chat-template",
             broken)
    assert r.returncode == 2 and "broken.jinja" in r.stderr, r.stderr


def test_text_jsonl_stays_text(stoker_cli, qwen_models, tmp_path):
    """A JSONL of documents is packed as before: no loss mask, EOS appended."""
    src = write_jsonl(tmp_path / "docs.jsonl", [{"text": "hello world"}, {"text": "more text"}])
    out = tmp_path / "text"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", qwen_models["qwen2_5"])
    assert r.returncode == 0, r.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert "loss_mask" not in manifest
    assert isinstance(stoker.inspect(out, document=0), list)


def test_chat_pack_records_the_tokenizer_as_a_text_pack_does(stoker_cli, qwen_models, tmp_path):
    """A chat pack parses tokenizer.json once (the chat encoder's tokenizer answers for the pack):
    the manifest's tokenizer (name, checksum, vocabulary size, EOS) is a text pack's, with and
    without --eos and --allow-special."""
    model = qwen_models["qwen2_5"]
    chats = write_jsonl(tmp_path / "chats.jsonl", [r for r in records() if "messages" in r])
    docs = write_jsonl(tmp_path / "docs.jsonl", [{"text": "hello world"}])
    for extra in ([], ["--eos", "<|im_start|>"], ["--allow-special"]):
        got = {}
        for name, src in (("chat", chats), ("text", docs)):
            out = tmp_path / f"{name}{len(extra)}"
            r = pack(stoker_cli, src, "-o", out, "--tokenizer", model, *extra)
            assert r.returncode == 0, r.stderr
            got[name] = json.loads((out / "manifest.json").read_text())["tokenizer"]
        assert "loss_mask" in json.loads((tmp_path / f"chat{len(extra)}" / "manifest.json")
                                         .read_text())
        assert got["chat"] == got["text"], extra
        assert ("allow-special" in got["chat"]["name"]) == ("--allow-special" in extra)


def test_verify_merge_and_inspect_carry_the_mask(stoker_cli, qwen_models, tmp_path):
    model = qwen_models["qwen2_5"]
    rows = records()
    parts = []
    for k, chunk in enumerate((rows[:4], rows[4:])):
        out = tmp_path / f"part{k}"
        r = pack(stoker_cli, write_jsonl(tmp_path / f"c{k}.jsonl", chunk), "-o", out,
                 "--tokenizer", model)
        assert r.returncode == 0, r.stderr
        parts.append(out)
    merged = tmp_path / "merged"
    r = subprocess.run([stoker_cli, "merge", *map(str, parts), "-o", str(merged)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    expect = [stoker.inspect(parts[0], document=i) for i in range(4)]
    expect += [stoker.inspect(parts[1], document=i) for i in range(len(rows) - 4)]
    assert [stoker.inspect(merged, document=i) for i in range(len(rows))] == expect
    m = json.loads((merged / "manifest.json").read_text())
    assert m["loss_mask"]["trained_tokens"] == sum(d["trained_tokens"] for d in expect)
    assert stoker.verify(merged)["ok"]
    # The CLI shows the rendered text with the trained runs marked.
    r = subprocess.run([stoker_cli, "inspect", str(merged), "--show-document", "0",
                        "--tokenizer", str(model)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "\u27e6Hello.<|im_end|>\u27e7" in r.stdout, r.stdout
    assert "You are terse." in r.stdout and "\u27e6You are terse" not in r.stdout
    # A damaged mask is found: spans past the document's end.
    mask_bin = sorted((parts[0] / "loss_mask").glob("*.bin"))[0]
    data = bytearray(mask_bin.read_bytes())
    data[4:8] = (10**6).to_bytes(4, "little")
    mask_bin.write_bytes(bytes(data))
    report = stoker.verify(parts[0])
    assert not report["ok"] and any("loss_mask" in p for p in report["problems"]), report
    # Chat data and text data do not merge.
    text = tmp_path / "text"
    write_jsonl(tmp_path / "t.jsonl", [{"text": "plain"}])
    assert pack(stoker_cli, tmp_path / "t.jsonl", "-o", text, "--tokenizer", model).returncode == 0
    r = subprocess.run([stoker_cli, "merge", str(parts[1]), str(text), "-o", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "loss mask" in r.stderr, r.stderr


def test_chat_records_from_parquet_and_webdataset(stoker_cli, qwen_models, tmp_path):
    """Conversations stored as records: a Parquet file written by `datasets` (its `messages`
    column a list of structs, `tools` a string of JSON as the hub stores it) and a WebDataset
    tar written by webdataset's own writer (one .json member per sample). Each packs to the ids
    and masks of the same conversations read from JSONL."""
    import datasets
    import webdataset as wds

    model = qwen_models["qwen2_5"]
    rows = [r for r in records() if "messages" in r and "tools" not in r]
    jsonl_out = tmp_path / "from-jsonl"
    r = pack(stoker_cli, write_jsonl(tmp_path / "chats.jsonl", rows), "-o", jsonl_out,
             "--tokenizer", model)
    assert r.returncode == 0, r.stderr
    want = [stoker.inspect(jsonl_out, document=i) for i in range(len(rows))]
    # Arrow needs one struct type per column: absent keys are nulls there, as on the hub.
    parquet = tmp_path / "parquet"
    parquet.mkdir()
    datasets.Dataset.from_list(rows).to_parquet(str(parquet / "train-00000.parquet"))
    tar = tmp_path / "wds"
    tar.mkdir()
    with wds.TarWriter(str(tar / "chats-000000.tar")) as sink:
        for i, row in enumerate(rows):
            sink.write({"__key__": f"{i:06d}", "json": row})
    for src in (parquet, tar):
        out = tmp_path / f"from-{src.name}"
        r = pack(stoker_cli, src, "-o", out, "--tokenizer", model)
        assert r.returncode == 0, (src, r.stderr)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["counters"]["documents"] == len(rows)
        got = [stoker.inspect(out, document=i) for i in range(len(rows))]
        assert got == want, src
