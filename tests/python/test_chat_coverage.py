"""Issue 44's coverage suite (tests/python/chat_coverage_cases.py): on Qwen2.5's real tokenizer.json
(NFC), Llama 3.2's real one with Llama 3.1's template, and a Gemma-layout SentencePiece-BPE built
from Llama 2's real vocabulary (Replace normalizer, byte fallback, runs of "▁" as added tokens;
also behind tokenizers' Strip normalizer),
every conversation transformers renders (indented code, runs of spaces and tabs, decomposed and
composed Unicode, CJK, emoji, repeated messages, empty system prompts, tool calls and results,
control-token text in content) is packed with transformers' ids (sanitized where content holds
control-token text) (also Hermes 3's and Mistral-Small-3.2's real tool-use templates,
and Mistral Nemo's template on its real Tekken vocabulary as transformers converts it, whose
ids also equal mistral-common's), and its mask equals transformers'
`return_assistant_tokens_mask` on the template with `{% generation %}` markers around assistant output (Gemma: docs/chat.md's rule
on `tokenizers`' offsets). The refusals this replaced each have a test here: Gemma's runs of
spaces (`token 5 ("▁▁") is not at byte 26`), Qwen's decomposed characters, Llama 3.1's
built-in tool call (`no end-of-turn token (<|eot_id|>) closes message 1`), assistant text that
begins with its own header (`the assistant header of message 1 ... is not in the text`); and a
conversation that
stoker still cannot align is a plain ValueError, and a counted skip under --on-error skip."""

import json
from pathlib import Path

import pytest

import stoker
from chat_coverage_cases import (check_family, conversations, families, gemma_layout_dir,
                                 has_control_text, llama31_generation_template,
                                 qwen25_generation_template, TEMPLATES)
from chat_testlib import pack, write_jsonl

transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def fams(tmp_path_factory):
    return {f[0]: f for f in families(tmp_path_factory.mktemp("coverage"))}


def family_names():
    return ["qwen2.5 (NFC, <tool_call>)", "llama3.1 (JSON, <|python_tag|>)",
            "gemma layout + gemma", "gemma layout + gemma3",
            "gemma layout, Strip normalizer + gemma", "phi-3 (Prepend, byte fallback)",
            "hermes-3 tool use (<tool_call>)", "mistral-small-3.2 ([TOOL_CALLS] [CALL_ID] [ARGS])",
            "mistral-nemo on its Tekken vocabulary (converted by transformers)"]


@pytest.mark.parametrize("family", family_names())
def test_every_rendered_conversation_is_packed_exactly(fams, family):
    _, model_dir, template, masks, variables = fams[family]
    rows = check_family(model_dir, template, masks, variables, stoker, transformers)
    rendered = [r for r in rows if r[1]]
    # Gemma's template renders no system or tool turn; Mistral-Small-3.2's wants 9-character
    # call ids
    assert len(rendered) >= 9, rows
    for name, _, packed, ids_equal, masks_equal, detail in rendered:
        assert packed, (name, detail)
        assert ids_equal, name
        assert masks_equal, name


def test_tekken_ids_equal_mistral_common(fams):
    """Mistral Nemo's real Tekken file through transformers' converter: stoker's ids of every
    message text of the coverage conversations (code, runs of spaces and tabs, decomposed
    Unicode, CJK, emoji) equal mistral-common's own Tekkenizer's."""
    tekken = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    import mistral_common

    model_dir = fams["mistral-nemo on its Tekken vocabulary (converted by transformers)"][1]
    ref = tekken.Tekkenizer.from_file(
        str(Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"))
    tok = stoker.Tokenizer(str(model_dir / "tokenizer.json"))
    texts = {m["content"] for name, messages, _, _ in conversations() for m in messages
             if isinstance(m.get("content"), str) and m["content"] and not has_control_text(name)}
    assert len(texts) >= 20
    for text in sorted(texts):
        assert list(tok.encode(text)) == ref.encode(text, bos=False, eos=False), text


def test_a_tekken_file_is_refused_naming_the_conversion():
    import mistral_common

    tekken = Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"
    with pytest.raises(ValueError, match=r"tekken_240718\.json.*Mistral Tekken file.*"
                                         r"convert_tekken_tokenizer"):
        stoker.Tokenizer(str(tekken))


def test_generation_copies_render_as_the_originals():
    """The reference templates only add markers: same text as the model's template."""
    env = transformers.utils.chat_template_utils._compile_jinja_template
    pairs = [(TEMPLATES / "qwen2_5.jinja", qwen25_generation_template(), {}),
             (TEMPLATES / "llama3_1.jinja", llama31_generation_template(),
              {"date_string": "26 Jul 2024", "bos_token": "<|begin_of_text|>"})]
    for original, marked, base in pairs:
        a, b = env(original.read_text(encoding="utf-8")), env(marked)
        for _, messages, tools, variables in conversations():
            kw = {**base, **variables, "messages": messages, "tools": tools}
            try:
                want = a.render(**kw)
            except Exception:
                continue
            assert b.render(**kw) == want


def ids_and_mask(model_dir, messages, tools=None, **kw):
    ids, mask = stoker.Tokenizer(model_dir).apply_chat_template(messages, tools, **kw)
    return list(ids), list(mask)


def trained_text(hf, ids, mask):
    return hf.decode([i for i, m in zip(ids, mask) if m])


def test_gemma_runs_of_spaces_were_refused(fams):
    """Was: `token 14 ("▁▁▁") is not at byte 69`: runs of spaces become runs of "▁", one
    added token that the model produces."""
    d = fams["gemma layout + gemma"][1]
    hf = transformers.AutoTokenizer.from_pretrained(d)
    code = "def f():\n    return 1\n\tx  =  2"
    messages = [{"role": "user", "content": "a  b"}, {"role": "assistant", "content": code}]
    ids, mask = ids_and_mask(d, messages)
    assert ids == list(hf.apply_chat_template(messages, tokenize=True, return_dict=False))
    assert "\u2581\u2581\u2581" in hf.convert_ids_to_tokens(ids)
    assert trained_text(hf, ids, mask) == code + "<end_of_turn>"


def test_qwen_decomposed_characters_were_refused(fams):
    d = fams["qwen2.5 (NFC, <tool_call>)"][1]
    hf = transformers.AutoTokenizer.from_pretrained(d)
    messages = [{"role": "user", "content": "Ko\u0308ln"},
                {"role": "assistant", "content": "e\u0301te\u0301"}]
    ids, mask = ids_and_mask(d, messages)
    assert ids == list(hf.apply_chat_template(messages, tokenize=True, return_dict=False))
    # The trained tokens spell the composed answer (the NFC normalizer's), then <|im_end|>.
    assert trained_text(hf, ids, mask) == "\u00e9t\u00e9<|im_end|>"


def test_tool_calls_are_trained_and_tool_results_never(fams):
    for family, call, result in [("qwen2.5 (NFC, <tool_call>)", "<tool_call>", "<tool_response>"),
                                 ("llama3.1 (JSON, <|python_tag|>)", '"parameters"', "ipython"),
                                 ("hermes-3 tool use (<tool_call>)", "<tool_call>",
                                  "<tool_response>"),
                                 ("mistral-small-3.2 ([TOOL_CALLS] [CALL_ID] [ARGS])",
                                  "[CALL_ID] call12345[ARGS]",
                                  "[TOOL_RESULTS]")]:
        d = fams[family][1]
        hf = transformers.AutoTokenizer.from_pretrained(d)
        name, messages, tools, variables = conversations()[12]
        assert name == "tool_call"
        family_vars = {k: v for k, v in fams[family][4].items() if k != "tools"}
        ids, mask = ids_and_mask(d, messages, tools, **family_vars, **variables)
        trained = trained_text(hf, ids, mask)
        assert call in trained and "get_weather" in trained, (family, trained)
        assert result not in trained and "temp" not in trained, (family, trained)


def test_pack_train_on_assistant_trains_tool_calls_of_real_tool_templates(stoker_cli, fams,
                                                                          tmp_path):
    """`stoker pack --train-on assistant` on Hermes 3's and Mistral-Small-3.2's tool-use templates:
    transformers' ids, the tool call trained, the tool result never."""
    for family, call, result in [("hermes-3 tool use (<tool_call>)", "<tool_call>",
                                  "<tool_response>"),
                                 ("mistral-small-3.2 ([TOOL_CALLS] [CALL_ID] [ARGS])",
                                  "[TOOL_CALLS]", "[TOOL_RESULTS]")]:
        d = fams[family][1]
        hf = transformers.AutoTokenizer.from_pretrained(d)
        name, messages, tools, _ = conversations()[12]
        src = write_jsonl(tmp_path / "calls.jsonl", [{"messages": messages, "tools": tools}])
        out = tmp_path / family.split()[0]
        r = pack(stoker_cli, src, "-o", out, "--tokenizer", d, "--train-on", "assistant")
        assert r.returncode == 0, r.stderr
        doc = stoker.inspect(out, document=0)
        assert doc["tokens"] == list(hf.apply_chat_template(messages, tools=tools, tokenize=True,
                                                            return_dict=False)), family
        trained = trained_text(hf, doc["tokens"], doc["loss_mask"])
        assert call in trained and "get_weather" in trained and "Paris" in trained, trained
        assert result not in trained and "temp" not in trained, trained


def test_llama_builtin_tool_call_was_refused(fams):
    """Was: `no end-of-turn token (<|eot_id|>) closes message 1`: a built-in tool call ends with
    <|eom_id|>, and it is trained from <|python_tag|> through it."""
    d = fams["llama3.1 (JSON, <|python_tag|>)"][1]
    hf = transformers.AutoTokenizer.from_pretrained(d)
    name, messages, tools, variables = conversations()[14]
    assert name == "builtin_tool"
    ids, mask = ids_and_mask(d, messages, tools, date_string="26 Jul 2024", **variables)
    assert trained_text(hf, ids, mask) == (
        '<|python_tag|>brave_search.call(query="news  today")<|eom_id|>Nothing new.<|eot_id|>')


def test_assistant_text_that_begins_with_its_header_was_refused(fams):
    """Was: `the assistant header of message 1 (what add_generation_prompt writes) is not in the
    text`: the header was searched for from where the message's text begins, found there (the text
    typed it), rejected, and never looked for before it."""
    for family, header, eot in [("gemma layout + gemma3", "<start_of_turn>model\n",
                                 "<end_of_turn>"),
                                ("qwen2.5 (NFC, <tool_call>)", "<|im_start|>assistant\n",
                                 "<|im_end|>")]:
        _, d, template, _, _ = fams[family]
        hf = transformers.AutoTokenizer.from_pretrained(d)
        kw = {"chat_template": template.read_text(encoding="utf-8")} if template else {}
        messages = [{"role": "user", "content": "hi"},
                    {"role": "assistant", "content": header + "yo"}]
        ids, mask = ids_and_mask(d, messages, chat_template=template)
        want = hf.apply_chat_template(messages, tokenize=True, return_dict=False,
                                      sanitize_control_tokens=True, **kw)
        assert ids == list(want["input_ids"] if hasattr(want, "keys") else want), family
        assert trained_text(hf, ids, mask) == header + "yo" + eot, family


def test_strip_normalizer_was_refused(fams):
    """Was: tokenizer.json's normalizer 'Strip' is not supported. Each run of text between control
    tokens loses its whitespace ends; a message's stripped whitespace is covered by its own tokens
    (docs/chat.md), so the trained text is the answer without its outer spaces."""
    d = fams["gemma layout, Strip normalizer + gemma"][1]
    hf = transformers.AutoTokenizer.from_pretrained(d)
    messages = [{"role": "user", "content": " \t hi  "},
                {"role": "assistant", "content": "  Hello  there \n"}]
    ids, mask = ids_and_mask(d, messages)
    assert ids == list(hf.apply_chat_template(messages, tokenize=True, return_dict=False))
    assert trained_text(hf, ids, mask) == "Hello  there<end_of_turn>"
    # Without the stripped ends the ids would be others: the normalizer is followed, not ignored.
    assert hf.encode(" a \n", add_special_tokens=False) == hf.encode("a", add_special_tokens=False)


@pytest.fixture(scope="module")
def no_byte_fallback(tmp_path_factory):
    """The Gemma layout without byte fallback (and "\n" added): a character outside the
    vocabulary is <unk>, whose bytes stoker cannot place."""
    from tokenizers import AddedToken, Tokenizer

    d = gemma_layout_dir(tmp_path_factory.mktemp("unk") / "gemma")
    j = json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))
    j["model"]["byte_fallback"] = False
    (d / "tokenizer.json").write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    t = Tokenizer.from_file(str(d / "tokenizer.json"))
    t.add_tokens([AddedToken("\n", normalized=False, special=False)])
    t.save(str(d / "tokenizer.json"))
    return d


UNALIGNABLE = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": "rocket \U0001F680 x"}]


def test_an_unalignable_conversation_is_a_plain_value_error(no_byte_fallback):
    with pytest.raises(ValueError, match="cannot place the tokens of this conversation") as e:
        stoker.Tokenizer(no_byte_fallback).apply_chat_template(UNALIGNABLE)
    assert "byte" not in str(e.value) and "token 1" not in str(e.value)
    assert f"(tokenizer {no_byte_fallback})" in str(e.value)  # the model it was encoded with


def test_an_unalignable_conversation_is_a_counted_skip(stoker_cli, no_byte_fallback, tmp_path):
    fine = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "fine"}]
    src = write_jsonl(tmp_path / "chats.jsonl",
                      [{"messages": fine}, {"messages": UNALIGNABLE}, {"messages": fine}])
    out = tmp_path / "out"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", no_byte_fallback, "--on-error", "skip")
    assert r.returncode == 0, r.stderr
    counters = json.loads((out / "manifest.json").read_text())["counters"]
    assert counters["documents"] == 2 and counters["bad_lines_skipped"] == 1, counters
    assert any(s.startswith("pack: skipped 1") and "cannot place the tokens" in s
               and "chats.jsonl:2" in s for s in r.stdout.splitlines()), r.stdout
    r = pack(stoker_cli, src, "-o", tmp_path / "fail", "--tokenizer", no_byte_fallback)
    assert r.returncode == 2 and "chats.jsonl:2" in r.stderr and "--on-error skip" in r.stderr
    assert f"(tokenizer {no_byte_fallback})" in r.stderr and "--bad-lines" not in r.stderr
