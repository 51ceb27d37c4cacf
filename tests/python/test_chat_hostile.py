"""Broken and hostile chat templates and records never kill the packer (issue 44): each is a
counted skip with its reason under `--on-error skip`, or an error naming the file, the line and
`--on-error skip`, never a signal; values follow Python where transformers' renderer does
(integers past int64 in tool arguments, `documents=`, full Unicode case mapping, an empty
assistant message). `stoker pack` runs as a child process, so a crash fails the test."""

import json
import signal

import pytest

import stoker
from chat_testlib import TEMPLATES, make_qwen_models, pack, write_jsonl

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    return make_qwen_models(tmp_path_factory.mktemp("hostile-models"))["qwen2_5"]


def conv(user, answer="A"):
    return {"messages": [{"role": "user", "content": user}, {"role": "assistant",
                                                              "content": answer}]}


def no_signal(r):
    """The pack ended by itself: a signal shows as a negative return code."""
    assert r.returncode >= 0, f"killed by {signal.Signals(-r.returncode).name}: {r.stderr[-2000:]}"


# Per user message, what the hostile template does (the probes of issue 44), and the reason the
# pack gives for skipping that record.
PROBES = {
    "div": ("{{ (-9223372036854775807 - 1) // -1 }}", "integer overflow in //"),
    "mul": ("{{ 'x' * 10**10 }}", "builds a value of more than"),
    "range": ("{% for i in range(10**9) %}{% break %}{% endfor %}", "Range too big"),
    "split": ("{{ 'abc'.split('') }}", "empty separator"),
    "double": ("{% set ns = namespace(s='x') %}{% for i in range(40) %}"
               "{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "builds a value of more than"),
    "slice": ("{{ [1, 2][::0] }}", "slice step cannot be zero"),
}


def hostile_template(tmp_path):
    """Qwen2.5's template, preceded by one probe per trigger word in the first user message."""
    branches = "".join(f"{{% {'if' if k == 0 else 'elif'} messages[0].content == '{word}' %}}"
                       f"{body}" for k, (word, (body, _)) in enumerate(PROBES.items()))
    path = tmp_path / "hostile.jinja"
    path.write_text(branches + "{% endif %}" +
                    (TEMPLATES / "qwen2_5.jinja").read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_hostile_templates_are_counted_skips(stoker_cli, qwen, tmp_path):
    template = hostile_template(tmp_path)
    rows = [conv("fine")] + [conv(word) for word in PROBES] + [conv("also fine")]
    src = write_jsonl(tmp_path / "probes.jsonl", rows)
    out = tmp_path / "out"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", qwen, "--chat-template", template,
             "--on-error", "skip")
    no_signal(r)
    assert r.returncode == 0, r.stderr
    counters = json.loads((out / "manifest.json").read_text())["counters"]
    assert counters["documents"] == 2 and counters["bad_lines_skipped"] == len(PROBES), counters
    # One line per reason: how many, the reason, where it was first met.
    skipped = [s for s in r.stdout.splitlines() if s.startswith("pack: skipped")]
    assert sum(int(s.split()[2].rstrip(":")) for s in skipped) == len(PROBES), r.stdout
    for line, (word, (_, reason)) in enumerate(PROBES.items(), start=2):
        assert any(reason in s and "(first at " in s for s in skipped), (word, r.stdout)
    assert any("integer overflow" in s and "probes.jsonl:2)" in s for s in skipped), r.stdout
    # Without skip: the first one is an error naming the file, the line and --on-error skip.
    r = pack(stoker_cli, src, "-o", tmp_path / "fail", "--tokenizer", qwen, "--chat-template",
             template)
    no_signal(r)
    assert r.returncode == 2 and "probes.jsonl:2" in r.stderr and "integer overflow" in r.stderr
    assert "--on-error skip" in r.stderr and "--bad-lines" not in r.stderr, r.stderr


def test_a_template_too_deep_to_parse_is_a_clear_error(stoker_cli, qwen, tmp_path):
    template = tmp_path / "deep.jinja"
    template.write_text("{{ " + "not " * 7200 + "x }}", encoding="utf-8")
    r = pack(stoker_cli, write_jsonl(tmp_path / "a.jsonl", [conv("hi")]), "-o", tmp_path / "o",
             "--tokenizer", qwen, "--chat-template", template, "--on-error", "skip")
    no_signal(r)
    assert r.returncode != 0 and "nested too deeply" in r.stderr, r.stderr


def test_hostile_records_are_counted_skips(stoker_cli, qwen, tmp_path):
    deep = ('{"messages": [{"role": "user", "content": "hi", "meta": ' + "[" * 30000 + "]" * 30000
            + '}, {"role": "assistant", "content": "A"}]}')
    src = tmp_path / "records.jsonl"
    src.write_text("\n".join([json.dumps(conv("one")), deep, json.dumps(conv("two"))]) + "\n",
                   encoding="utf-8")
    out = tmp_path / "out"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", qwen, "--on-error", "skip")
    no_signal(r)
    assert r.returncode == 0, r.stderr
    counters = json.loads((out / "manifest.json").read_text())["counters"]
    assert counters["documents"] == 2 and counters["bad_lines_skipped"] == 1, counters
    assert "more than 1000 levels deep (first at" in r.stdout, r.stdout


def render_both(model_dir, template, messages, **kwargs):
    """(stoker's, transformers') rendering of `messages` with the template text `template`."""
    path = model_dir.parent / "probe.jinja"
    path.write_text(template, encoding="utf-8")
    ours = stoker.ChatTemplate(path, config_dir=model_dir).render(messages, **kwargs)
    hf = transformers.AutoTokenizer.from_pretrained(model_dir)
    theirs = hf.apply_chat_template(messages, chat_template=template, tokenize=False, **kwargs)
    return ours, theirs


def test_values_render_as_transformers_renders_them(qwen):
    big = {"role": "assistant", "tool_calls": [{"type": "function", "function": {
        "name": "f", "arguments": {"id": 12345678901234567890, "n": -9223372036854775808}}}]}
    template = ("{% for m in messages %}{{ m.tool_calls[0].function.arguments|tojson }} "
                "{{ m.tool_calls[0].function.arguments.id }}{% endfor %}")
    ours, theirs = render_both(qwen, template, [big])
    assert ours == theirs and "12345678901234567890" in ours
    docs = [{"title": "T", "text": "Doc body"}]
    template = "{% for d in documents %}[{{ d.title }}: {{ d.text }}]{% endfor %}{{ messages[0].content }}"
    ours, theirs = render_both(qwen, template, [{"role": "user", "content": "q"}], documents=docs)
    assert ours == theirs == "[T: Doc body]q"
    template = ("{{ messages[0].content.upper() }}|{{ messages[0].content|upper }}|"
                "{{ messages[0].content.lower() }}|{{ messages[0].content.title() }}|"
                "{{ messages[0].content.isalpha() }}|{{ '²٣'.isdigit() }}")
    for text in ("straße ﬁx", "ΟΔΟΣ ΣΑΣ", "İstanbul", "émigré"):
        ours, theirs = render_both(qwen, template, [{"role": "user", "content": text}])
        assert ours == theirs, text


def test_an_empty_assistant_message_is_packed(stoker_cli, qwen, tmp_path):
    """transformers renders {"role": "assistant", "content": ""}; stoker packs it with the same
    ids, its end-of-turn token trained."""
    rows = [conv("say nothing", ""), conv("then", "something")]
    tok = stoker.Tokenizer(qwen)
    hf = transformers.AutoTokenizer.from_pretrained(qwen)
    for row in rows:
        ids, mask = tok.apply_chat_template(row)
        assert list(ids) == hf.apply_chat_template(row["messages"], tokenize=True,
                                                   return_dict=True)["input_ids"]
        assert sum(mask) >= 1
    out = tmp_path / "out"
    r = pack(stoker_cli, write_jsonl(tmp_path / "e.jsonl", rows), "-o", out, "--tokenizer", qwen)
    no_signal(r)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "manifest.json").read_text())["counters"]["documents"] == 2


def test_mistral_tool_calls_and_equal_messages_are_trained(qwen):
    """Issue 44's old refusals: Mistral's tool-call turn (no text, an empty generation header:
    "message N has no text and no header") is trained from [TOOL_CALLS] through its end-of-turn
    token; two equal user messages, before each of which Mistral writes its tools, no longer read
    as "the template changes a message's text"."""
    from chat_testlib import TOOLS

    t = stoker.ChatTemplate(TEMPLATES / "mistral_nemo.jinja", config_dir=qwen)
    hf = transformers.AutoTokenizer.from_pretrained(qwen)
    template = (TEMPLATES / "mistral_nemo.jinja").read_text(encoding="utf-8")
    call = {"id": "abcdefghi", "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    msgs = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "content": "cold", "tool_call_id": "abcdefghi"},
            {"role": "assistant", "content": "Cold."}]
    text, spans = t.spans(msgs, TOOLS)
    assert text == hf.apply_chat_template(msgs, tools=TOOLS, chat_template=template,
                                          tokenize=False)
    assert [text[a:b] for a, b in spans] == [
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Oslo"}, "id": "abcdefghi"}]'
        '<|im_end|>', "Cold.<|im_end|>"]
    same = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "A"},
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "B"}]
    text, spans = t.spans(same, TOOLS)
    assert text == hf.apply_chat_template(same, tools=TOOLS, chat_template=template,
                                          tokenize=False)
    assert text.count("[AVAILABLE_TOOLS]") == 2
    assert [text[a:b] for a, b in spans] == ["A<|im_end|>", "B<|im_end|>"]


def test_a_records_documents_reach_the_template(stoker_cli, qwen, tmp_path):
    """A chat record's top-level `documents` list is the template's `documents` (Granite's and
    Command-R's retrieval templates), as apply_chat_template(documents=...) passes it."""
    template = tmp_path / "rag.jinja"
    template.write_text("{%- if documents %}{{- '<|im_start|>system\\nDocuments:' }}"
                        "{%- for d in documents %}{{- '\\n[' ~ d.title ~ '] ' ~ d.text }}"
                        "{%- endfor %}{{- '<|im_end|>\\n' }}{%- endif %}" +
                        (TEMPLATES / "qwen2_5.jinja").read_text(encoding="utf-8"),
                        encoding="utf-8")
    docs = [{"title": "Tides", "text": "Twice a day."}, {"title": "Moon", "text": "It pulls."}]
    rows = [{**conv("Why tides?", "The moon."), "documents": docs}, conv("no docs", "ok")]
    out = tmp_path / "out"
    r = pack(stoker_cli, write_jsonl(tmp_path / "rag.jsonl", rows), "-o", out, "--tokenizer", qwen,
             "--chat-template", template)
    no_signal(r)
    assert r.returncode == 0, r.stderr
    hf = transformers.AutoTokenizer.from_pretrained(qwen)
    for k, row in enumerate(rows):
        want = hf.apply_chat_template(row["messages"], documents=row.get("documents"),
                                      chat_template=template.read_text(encoding="utf-8"),
                                      tokenize=True, return_dict=False)
        doc = stoker.inspect(out, document=k)
        assert doc["tokens"] == list(want), k
    assert "[Tides] Twice a day." in hf.decode(stoker.inspect(out, document=0)["tokens"])


def test_a_pack_that_skips_every_record_says_why(stoker_cli, qwen, tmp_path):
    """Under --on-error skip, a pack left with no documents names the reason it skipped them (the
    summary of reasons is printed only after a pack that succeeds)."""
    template = hostile_template(tmp_path)
    src = write_jsonl(tmp_path / "all_bad.jsonl", [conv("split"), conv("split")])
    r = pack(stoker_cli, src, "-o", tmp_path / "out", "--tokenizer", qwen, "--chat-template",
             template, "--on-error", "skip")
    no_signal(r)
    assert r.returncode == 2 and "hold no documents" in r.stderr, r.stderr
    assert "skipped 2: chat template" in r.stderr and "empty separator" in r.stderr, r.stderr
    assert "(first at " in r.stderr and "all_bad.jsonl:1)" in r.stderr, r.stderr
