"""The chat coverage conversations of issue 44 and the tokenizer families they are checked on,
shared by tests/python/test_chat_coverage.py and bench/chat_coverage.py.

Conversations: indented code, runs of spaces and tabs, decomposed and composed Unicode, CJK, emoji,
the meta symbol "▁" itself, repeated messages, an empty system prompt, tool calls and tool results,
and control-token text in content (every family's control tokens; assistant text that begins with
each family's assistant header), whose ids are transformers' sanitized ones
(`sanitize_control_tokens=True`) and whose masks, which transformers cannot give while sanitizing,
are checked as the trained text: every assistant text, no user text.
Families: Qwen2.5's real
tokenizer.json (NFC normalizer) with its own template and the Hermes-style tool calls
(`<tool_call>`); Llama 3.2's real tokenizer.json with Llama 3.1's template (JSON tool calls, and
`<|python_tag|>` calls of built-in tools); and a Gemma-layout tokenizer built here with `tokenizers`
from Llama 2's real SentencePiece vocabulary (Gemma's own file cannot be shipped,
tests/data/tokenizers/README.md): Replace(" ", "▁") normalizer, byte fallback, no dummy prefix,
and Gemma's runs of "▁" and of tabs as non-special added tokens that are model pieces too, with
Gemma's and Gemma 3's templates, and with tokenizers' Strip normalizer in front (Gemma's template); and Phi-3's real tokenizer.json (Prepend + Replace, byte fallback,
rstrip control tokens) with its own template; Hermes 3's real tool-use template on Llama 3.2's
tokenizer.json with Hermes 3's ChatML and tool tokens (`<tool_call>`; every conversation rendered
with tools, which that template needs); Mistral-Small-3.2's real template on Mistral's v7
SentencePiece model with [ARGS] and [CALL_ID] (`[TOOL_CALLS]name[CALL_ID]id[ARGS]{...}`).
Masks (--train-on assistant, the span finder on the model's own template) are checked against
transformers' `return_assistant_tokens_mask` on a copy of Qwen2.5's, Llama 3.1's and Hermes 3's
templates with `{% generation %}` markers added here around each assistant turn's output, tool
calls included, from after the assistant header through the end-of-turn token (docs/chat.md's
rule; TRL's training templates also train the newline after <|im_end|>); the copy's ids are
checked equal to the original's. For Gemma, Phi-3 and Mistral-Small-3.2 (no such template):
docs/chat.md's rule on the offsets of transformers' own `tokenizers` backend."""

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

DATA = HERE.parent / "data"
TEMPLATES = DATA / "chat_templates"
LLAMA2_MODEL = DATA / "tokenizers" / "llama-2" / "tokenizer.model"
PHI3 = DATA / "tokenizers" / "phi-3-mini-4k-instruct"
META = "\u2581"
LLAMA_VARS = {"date_string": "26 Jul 2024"}  # else Llama 3.1's template writes today's date

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]

CODE = ("def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n\n"
        "class A:\n\tdef f(self):\n\t\treturn  {'a':  1}\n")


def conversations():
    """(name, messages, tools, template variables)."""
    u = lambda c: {"role": "user", "content": c}  # noqa: E731
    a = lambda c, **k: {"role": "assistant", "content": c, **k}  # noqa: E731
    s = lambda c: {"role": "system", "content": c}  # noqa: E731

    def call(name, args, **k):
        return {"type": "function", "function": {"name": name, "arguments": args}, **k}

    return [
        ("code", [u("Write fib in Python:\n```\n  x = 1\n```"), a(f"Here:\n```python\n{CODE}```")],
         None, {}),
        ("spaces", [u("a  b   c    d"), a("x  y\t\tz \t w     end")], None, {}),
        ("tabs_and_newlines", [u("\tindented\n\n\n  two"), a("\t\t\tthree tabs\n    four spaces")],
         None, {}),
        ("decomposed", [u("Cafe\u0301 and Ko\u0308ln"), a("e\u0301te\u0301, Zu\u0308rich")], None,
         {}),
        ("composed", [u("Caf\u00e9 and K\u00f6ln"), a("\u00e9t\u00e9, Z\u00fcrich")], None, {}),
        ("hangul_jamo", [u("\u1100\u1161\u11a8 and \uac01"),
                         a("\u1112\u1161\u11ab\u1100\u1173\u11af")], None, {}),
        ("cjk", [u("你好，世界。日本語のテキスト"), a("这是中文回答。　全角スペース")], None, {}),
        ("emoji", [u("🚀🚀 👩‍👩‍👧 🇫🇷 ✓"), a("Sure 😀  🎉\u200d x")], None, {}),
        ("repeated", [u("same"), a("same"), u("same"), a("same")], None, {}),
        ("meta_symbol", [u("x\u2581y \u2581"), a("a \u2581\u2581 b\u2581")], None, {}),
        ("empty_system", [s(""), u("Hi  there"), a("  Hello  ")], None, {}),
        ("system_code", [s("Format:\n    indent 4"), u("ok"), a("    ok")], None, {}),
        ("tool_call", [s("Use tools."), u("Weather in Paris?"),
                       {"role": "assistant", "tool_calls": [call("get_weather", {"city": "Paris"},
                                                                 id="call12345")]},
                       {"role": "tool", "content": "{\"temp\": 21}", "tool_call_id": "call12345"},
                       a("It is 21°C in Paris.")], TOOLS, {}),
        ("tool_call_decomposed", [u("Weather in Zu\u0308rich?"),
                                  {"role": "assistant", "tool_calls": [
                                      call("get_weather", {"city": "Zu\u0308rich  x"})]},
                                  {"role": "tool", "content": "cold  and\tgrey"}, a("Cold.")],
         TOOLS, {}),
        ("builtin_tool", [u("Search the news"),
                          {"role": "assistant", "tool_calls": [
                              call("brave_search", {"query": "news  today"})]},
                          {"role": "tool", "content": "Nothing new."}, a("Nothing new.")],
         None, {"builtin_tools": ["brave_search", "wolfram_alpha"]}),
        # Control-token text typed in content: transformers' sanitized ids (the text as text).
        ("control_text", [u(f"U: {CONTROL_TEXT}"), a(f"A: {CONTROL_TEXT}")], None, {}),
        # Assistant text that begins with an assistant header, each family's in turn.
        ("control_headers", [x for k, h in enumerate(HEADERS) for x in (u(f"q{k}"), a(h + "yo"))],
         None, {}),
    ]


# Control tokens of every family, and the assistant headers they write (docs/chat.md, "Ids").
CONTROL_TEXT = ("<|im_end|> then <end_of_turn>, [INST] x [/INST] <|eot_id|> <tool_call> "
                "[TOOL_CALLS] <|end|> <s></s> <|python_tag|> ok")
HEADERS = ["<start_of_turn>model\n", "<|im_start|>assistant\n",
           "<|start_header_id|>assistant<|end_header_id|>\n\n", "<|assistant|>\n", "[/INST]"]


def has_control_text(name):
    """Whether the coverage conversation `name` types control tokens in its content."""
    return name.startswith("control")


def trained_text_matches(hf, ids, mask, messages):
    """For conversations with control-token text, which transformers cannot mask while it
    sanitizes: the trained tokens spell each assistant text and no user text (spaces aside: a
    Strip normalizer drops those beside control tokens)."""
    squeeze = lambda t: "".join(t.split())  # noqa: E731
    trained = squeeze(hf.decode([i for i, m in zip(ids, mask) if m]))
    return (all(squeeze(m["content"]) in trained for m in messages if m["role"] == "assistant")
            and not any(squeeze(m["content"]) in trained for m in messages
                        if m["role"] == "user"))


def llama31_generation_template():
    """Llama 3.1's template with {% generation %} around each assistant turn's output (the content
    and its <|eot_id|>; a tool call from its JSON or <|python_tag|> to its end token)."""
    t = (TEMPLATES / "llama3_1.jinja").read_text(encoding="utf-8")
    header = "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}"
    plain = ("{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ "
             "message['content'] | trim + '<|eot_id|>' }}")
    assert t.count(header) == 2 and t.count(plain) == 1
    t = t.replace(plain, (
        "{%- if message.role == 'assistant' %}"
        "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- generation %}"
        "{{- message['content'] | trim + '<|eot_id|>' }}{%- endgeneration %}"
        "{%- else %}" + plain + "{%- endif %}"))
    t = t.replace(header, "")
    call = "{%- set tool_call = message.tool_calls[0].function %}"
    t = t.replace(call, call + header + "{%- generation %}")
    end = ('            {{- "<|eot_id|>" }}\n        {%- endif %}\n'
           '    {%- elif message.role == "tool"')
    assert t.count(end) == 1
    return t.replace(end, end.replace("{%- endif %}\n", "{%- endif %}{%- endgeneration %}\n"))


def qwen25_generation_template():
    """Qwen2.5's template with {% generation %} around each assistant turn's output, from after
    "<|im_start|>assistant\n" through its <|im_end|> (content and <tool_call> blocks)."""
    t = (TEMPLATES / "qwen2_5.jinja").read_text(encoding="utf-8")
    plain = "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
    assert t.count(plain) == 1
    t = t.replace(plain, (
        "{%- if message.role == 'assistant' %}{{- '<|im_start|>assistant\\n' }}{%- generation %}"
        "{{- message.content + '<|im_end|>' }}{%- endgeneration %}{{- '\\n' }}"
        "{%- else %}" + plain + "{%- endif %}"))
    start = t.index('{%- elif message.role == "assistant" %}')
    end = t.index('{%- elif message.role == "tool" %}')
    calls = """{%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role + '\\n' }}{%- generation %}
        {%- if message.content %}{{- message.content }}{%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {%- if message.content or not loop.first %}{{- '\\n' }}{%- endif %}
            {{- '<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>' }}{%- endgeneration %}{{- '\\n' }}
    """
    return t[:start] + calls + t[end:]


def write_sp_config(dest, template, control):
    """dest/tokenizer_config.json of a SentencePiece-style model: <s>, </s>, the template (a file
    in tests/data/chat_templates) and `control` ({id: text}) as special tokens; returns dest."""
    config = {"bos_token": "<s>", "eos_token": "</s>",
              "chat_template": (TEMPLATES / template).read_text(encoding="utf-8"),
              "added_tokens_decoder": {str(i): {"content": c, "special": True}
                                       for i, c in control.items()}}
    (dest / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return dest


def hermes3_generation_template():
    """Hermes 3's tool-use template with {% generation %} around each assistant turn's output:
    from after "<|im_start|>assistant\n" (the generation prompt) through <|im_end|>, text and tool
    calls alike (the first call's "\n<tool_call>" is cut after its newline)."""
    t = (TEMPLATES / "hermes3_tool_use.jinja").read_text(encoding="utf-8")
    plain = "{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}"
    calls = "{{- '<|im_start|>' + message.role }}"
    end = "{{- '<|im_end|>\n' }}"
    assert t.count(plain) == 1 and t.count(calls) == 1 and t.count(end) == 1
    t = t.replace(plain, (
        "{%- if message.role == 'assistant' %}{{- '<|im_start|>assistant\n' }}{%- generation %}"
        "{{- message.content + '<|im_end|>' }}{%- endgeneration %}{{- '\n' }}"
        "{%- else %}" + plain + "{%- endif %}"))
    first = "{{- '\n<tool_call>\n' }}"
    assert t.count(first) == 1
    t = t.replace(calls, calls + "{{- '\n' }}{%- generation %}")
    t = t.replace(first, "{%- if not loop.first %}{{- '\n' }}{%- endif %}{{- '<tool_call>\n' }}")
    return t.replace(end, "{{- '<|im_end|>' }}{%- endgeneration %}{{- '\n' }}")


def hermes3_layout_dir(dest):
    """Llama 3.2's real tokenizer.json with reserved special tokens renamed to Hermes 3's
    (<|im_start|>, <|im_end|> special; <tool_call>, </tool_call>, <tool_response>,
    </tool_response> added, not special: the layout of NousResearch/Hermes-3-Llama-3.1-8B's
    tokenizer, whose own file and exact ids are not shipped here) and Hermes 3's tool-use
    template (tests/data/chat_templates/hermes3_tool_use.jinja); returns it."""
    from test_chat_real_tokenizers import llama_config, write_model_dir

    d = write_model_dir("llama3.2", dest, "hermes3_tool_use.jinja")
    j = json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))
    names = {f"<|reserved_special_token_{i}|>": (n, i < 2) for i, n in enumerate(
        ["<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>", "<tool_response>",
         "</tool_response>"])}
    for t in j["added_tokens"]:
        if t["content"] in names:
            t["content"], t["special"] = names[t["content"]]
    (d / "tokenizer.json").write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    config = llama_config(d / "tokenizer.json")
    config["eos_token"] = "<|im_end|>"
    config["chat_template"] = (TEMPLATES / "hermes3_tool_use.jinja").read_text(encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False),
                                             encoding="utf-8")
    return d


def mistral_small_layout_dir(dest):
    """Mistral's v7 SentencePiece BPE model (mistral-common's, Mistral Large 2411's) as the
    tokenizer.json transformers makes of it (LlamaConverter's legacy layout), with two of its
    unused control pieces renamed to Tekken v11's [ARGS] and [CALL_ID] (Mistral-Small-3.2's own
    Tekken file is not shipped here), and Mistral-Small-3.2's template
    (tests/data/chat_templates/mistral_small_3_2.jinja); returns it."""
    from sp_cases import mistral_model, sp_tokenizer_json
    from tokenizers import Tokenizer

    dest.mkdir(parents=True, exist_ok=True)
    v7 = mistral_model("v3").parent / "mistral_instruct_tokenizer_241114.model.v7"
    sp_tokenizer_json(v7, dest / "tokenizer.json", "legacy")
    j = json.loads((dest / "tokenizer.json").read_text(encoding="utf-8"))
    rename = {"[control_32]": "[ARGS]", "[control_33]": "[CALL_ID]"}
    vocab = j["model"]["vocab"]
    for old, new in rename.items():
        vocab[new] = vocab.pop(old)
    for t in j["added_tokens"]:
        t["content"] = rename.get(t["content"], t["content"])
    (dest / "tokenizer.json").write_text(json.dumps(j, ensure_ascii=False), encoding="utf-8")
    t = Tokenizer.from_file(str(dest / "tokenizer.json"))
    control = {i: a.content for i, a in t.get_added_tokens_decoder().items() if a.special}
    return write_sp_config(dest, "mistral_small_3_2.jinja", control)


def tekken_nemo_dir(dest):
    """Mistral Nemo's real Tekken vocabulary (tekken_240718.json, which mistral-common ships) as
    the tokenizer.json that transformers' convert_tekken_tokenizer makes of it (stoker reads no
    tekken.json itself), with Mistral Nemo's template
    (tests/data/chat_templates/mistral_nemo.jinja); returns it."""
    import mistral_common
    from transformers.integrations.mistral.tokenizer import convert_tekken_tokenizer

    tekken = Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"
    convert_tekken_tokenizer(str(tekken)).save_pretrained(str(dest), save_format="hf")
    template = (TEMPLATES / "mistral_nemo.jinja").read_text(encoding="utf-8")
    (dest / "chat_template.jinja").write_text(template, encoding="utf-8")
    config = json.loads((dest / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["chat_template"] = template
    (dest / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return dest


def gemma_layout_dir(dest, strip=False):
    """A model directory with a Gemma-layout tokenizer.json (see the module docstring) and
    Gemma's template; returns it. `strip`: tokenizers' Strip normalizer (both ends) before its
    Replace, so each run of text between control tokens loses its whitespace ends."""
    from sp_cases import sp_tokenizer_json
    from tokenizers import AddedToken, Tokenizer, normalizers

    dest.mkdir(parents=True, exist_ok=True)
    sp_tokenizer_json(LLAMA2_MODEL, dest / "tokenizer.json", "never")
    t = Tokenizer.from_file(str(dest / "tokenizer.json"))
    if strip:
        t.normalizer = normalizers.Sequence([normalizers.Strip(left=True, right=True),
                                             normalizers.Replace(pattern=" ", content=META)])
    # Gemma's user-defined pieces: runs of "▁" and of tabs, not special, matched on the raw text.
    t.add_tokens([AddedToken(META * n, normalized=False, special=False) for n in range(2, 32)]
                 + [AddedToken("\t" * n, normalized=False, special=False) for n in range(1, 32)])
    t.add_special_tokens([AddedToken(s, normalized=False, special=True)
                          for s in ("<start_of_turn>", "<end_of_turn>")])
    t.save(str(dest / "tokenizer.json"))
    control = {t.token_to_id(s): s for s in ("<s>", "</s>", "<start_of_turn>", "<end_of_turn>")}
    return write_sp_config(dest, "gemma.jinja", control)


def rule_mask(offsets, spans):
    """docs/chat.md: a token is trained when its characters overlap a trained span."""
    return [int(any((b < f and s < e) or (b == e and s <= b < f) for s, f in spans))
            for b, e in offsets]


def families(root):
    """[(family, model dir, template path or None (the directory's own), mask reference, template
    variables)]: the mask reference is a template with {% generation %} markers that renders the
    same text (transformers' return_assistant_tokens_mask on it is the reference for stoker's
    --train-on assistant on the family's template), "rule" (docs/chat.md's rule on tokenizers'
    offsets) or None."""
    from test_chat_real_tokenizers import write_model_dir

    root = Path(root)
    qwen = write_model_dir("qwen2.5", root / "qwen2.5")
    llama = write_model_dir("llama3.2", root / "llama3.1", "llama3_1.jinja")
    llama_gen = root / "llama3_1_generation.jinja"
    llama_gen.write_text(llama31_generation_template(), encoding="utf-8")
    qwen_gen = root / "qwen2_5_generation.jinja"
    qwen_gen.write_text(qwen25_generation_template(), encoding="utf-8")
    gemma = gemma_layout_dir(root / "gemma-layout")
    gemma_strip = gemma_layout_dir(root / "gemma-layout-strip", strip=True)
    hermes = hermes3_layout_dir(root / "hermes3")
    hermes_gen = root / "hermes3_generation.jinja"
    hermes_gen.write_text(hermes3_generation_template(), encoding="utf-8")
    mistral_small = mistral_small_layout_dir(root / "mistral-small-3.2")
    nemo = tekken_nemo_dir(root / "mistral-nemo-tekken")
    return [
        ("qwen2.5 (NFC, <tool_call>)", qwen, None, qwen_gen, {}),
        ("llama3.1 (JSON, <|python_tag|>)", llama, None, llama_gen, LLAMA_VARS),
        ("gemma layout + gemma", gemma, None, "rule", {}),
        ("gemma layout + gemma3", gemma, TEMPLATES / "gemma3.jinja", "rule", {}),
        ("gemma layout, Strip normalizer + gemma", gemma_strip, None, "rule", {}),
        ("phi-3 (Prepend, byte fallback)", PHI3, None, "rule", {}),
        ("hermes-3 tool use (<tool_call>)", hermes, None, hermes_gen, {"tools": TOOLS}),
        ("mistral-small-3.2 ([TOOL_CALLS] [CALL_ID] [ARGS])", mistral_small, None, "rule", {}),
        ("mistral-nemo on its Tekken vocabulary (converted by transformers)", nemo, None, "rule",
         {}),
    ]


def check_family(model_dir, template_path, masks, family_vars, stoker, transformers):
    """Per conversation: (name, rendered, packed, ids_equal, masks_equal or None, detail)."""
    hf = transformers.AutoTokenizer.from_pretrained(model_dir)
    kw = {"chat_template": template_path.read_text(encoding="utf-8")} if template_path else {}
    ref = ({"chat_template": masks.read_text(encoding="utf-8")} if isinstance(masks, Path)
           else None)
    try:
        tok, refused = stoker.Tokenizer(model_dir), ""
    except ValueError as e:  # a tokenizer.json this stoker does not read (before/after runs)
        tok, refused = None, f"{type(e).__name__}: {e}"
    template = (stoker.ChatTemplate(template_path, config_dir=model_dir) if template_path
                else stoker.ChatTemplate(model_dir))
    out = []
    for name, messages, tools, variables in conversations():
        variables = {**family_vars, **variables}
        tools = tools or variables.pop("tools", None)  # a template that needs tools (Hermes 3)
        variables.pop("tools", None)
        sanitize = {"sanitize_control_tokens": True} if has_control_text(name) else {}
        try:
            text = hf.apply_chat_template(messages, tools=tools, tokenize=False, **kw,
                                          **variables)
            want = hf.apply_chat_template(messages, tools=tools, tokenize=True,
                                          return_dict=False, **kw, **variables, **sanitize)
            want = list(want["input_ids"] if hasattr(want, "keys") else want)
        except Exception:  # the template refuses it (Gemma: no system role)
            out.append((name, False, False, False, None, "not rendered"))
            continue
        if tok is None:
            out.append((name, True, False, False, None, refused))
            continue
        try:
            ids, mask = tok.apply_chat_template(messages, tools, chat_template=template_path,
                                                **variables)
        except Exception as e:
            out.append((name, True, False, False, None, f"{type(e).__name__}: {e}"))
            continue
        ids, mask = list(ids), list(mask)
        masks_equal = None
        if sanitize and masks is not None:
            masks_equal = trained_text_matches(hf, ids, mask, messages)
        elif ref is not None:
            r = hf.apply_chat_template(messages, tools=tools, tokenize=True, return_dict=True,
                                       return_assistant_tokens_mask=True, **ref, **variables)
            masks_equal = list(r["input_ids"]) == want and mask == list(r["assistant_masks"])
        elif masks == "rule":
            _, spans = template.spans(messages, tools, **variables)
            # transformers' own backend (for Phi-3 it moves the dummy prefix; docs/chat.md).
            enc = hf._tokenizer.encode(text, add_special_tokens=False)
            masks_equal = enc.ids == ids and mask == rule_mask(enc.offsets, spans)
        out.append((name, True, True, ids == want, masks_equal, ""))
    return out
