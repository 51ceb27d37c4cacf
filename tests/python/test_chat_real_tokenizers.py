"""Chat ids and loss masks with the real tokenizers of popular models (tests/data/tokenizers/README.md):
Qwen2.5-Instruct, Qwen3 (thinking), Llama 3.2, SmolLM3 and DeepSeek-R1-Distill-Qwen, their published
tokenizer.json (kept xz-compressed, checked against the sha256 the README records) with their own
chat templates.

On generated conversations (tests/python/test_chat_template.py's: system prompts, several turns,
tools, reasoning, unicode, control-token text in content, content parts), stoker's
`Tokenizer(dir).apply_chat_template` gives transformers' `apply_chat_template(..., tokenize=True,
sanitize_control_tokens=True)` ids (docs/chat.md, "Ids"), and where no control-token text is in the
messages, `tokenizers`' own ids of the rendered text; with templates that have `{% generation %}`
markers (TRL's Qwen2.5, Qwen3 and Llama 3 training templates, SmolLM3's own), the mask is
transformers' `return_assistant_tokens_mask=True` `assistant_masks` (DeepSeek-R1's template has
no markers and no training variant: its masks follow docs/chat.md's rule, with no reference to check
them against here); and `stoker pack` stores the same ids. Cases with a test of their own:
control-token text in content for added tokens that are not special (Qwen's <tool_call>, <think>,
DeepSeek's <｜User｜>) and for special tokens a tokenizer_config.json does not list (taken from
tokenizer.json, as transformers does); reasoning written in content, which Qwen3's template splits
(the rendered text encoded as tokenizers does); Qwen3's empty turns (refused)."""

import hashlib
import json
import lzma
import os
import re
from pathlib import Path

import pytest

import stoker
from chat_testlib import pack, write_jsonl
from test_chat_template import conversations

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

DATA = Path(__file__).resolve().parents[1] / "data"
TOKENIZERS = DATA / "tokenizers"
TEMPLATES = DATA / "chat_templates"

# name: (directory under tests/data/tokenizers, the template from tests/data/chat_templates when the
# directory has none of its own, template variables given to both sides).
MODELS = {
    "qwen2.5": ("qwen2.5-instruct", None, {}),
    "qwen3": ("qwen3", None, {}),
    # Llama 3.2's template writes today's date unless date_string is given.
    "llama3.2": ("llama-3.2", "llama3_2.jinja", {"date_string": "26 Jul 2024"}),
    "smollm3": ("smollm3", None, {}),
    # DeepSeek-R1-Distill-Qwen-1.5B: Qwen2.5's vocabulary, DeepSeek's added tokens and template.
    "deepseek-r1": ("deepseek-r1-distill-qwen-1.5b", None, {}),
}
# The templates with {% generation %} markers each model's masks are checked with (None: its own).
# A model not listed has neither (DeepSeek-R1): its masks are not compared with transformers'.
TRAINING = {
    "qwen2.5": "qwen2_5_training.jinja",
    "qwen3": "qwen3_training.jinja",
    "llama3.2": "llama3_training.jinja",
    "smollm3": None,
}
LLAMA_CONFIG = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
# Conversations the ids test leaves to a test of their own: (model, conversation, enable_thinking).
OWN_TEST = {("qwen3", "parts", False): "test_qwen3_list_content_is_refused_without_thinking"}
# How many conversations a model's own template fails to render (transformers raises as well, and
# the ids test checks that stoker refuses them): DeepSeek-R1's concatenates content given as a list
# of parts ("parts") and reads `content` of a tool-call turn that has none ("tools").
TEMPLATE_REFUSES = {"deepseek-r1": 2}


def pinned_files():
    """{"<dir>/tokenizer.json": (bytes, sha256)} from the README's table of decompressed files."""
    text = (TOKENIZERS / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w.-]+/tokenizer\.json)` \| ([\d,]+) \| `([0-9a-f]{64})` \|", text,
                      re.MULTILINE)
    return {name: (int(size.replace(",", "")), sha) for name, size, sha in rows}


def decompress(src_dir, dest):
    """dest/tokenizer.json from src_dir/tokenizer.json.xz, checked against the README's sha256."""
    data = lzma.decompress((src_dir / "tokenizer.json.xz").read_bytes())
    size, sha = pinned_files()[f"{src_dir.name}/tokenizer.json"]
    assert (len(data), hashlib.sha256(data).hexdigest()) == (size, sha), src_dir.name
    (dest / "tokenizer.json").write_bytes(data)


class Model:
    def __init__(self, name, path):
        self.name, self.dir, self.vars = name, path, MODELS[name][2]
        self.hf = transformers.AutoTokenizer.from_pretrained(path)
        self.tok = stoker.Tokenizer(path)
        self.plain = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
        added = self.hf.added_tokens_decoder.values()
        self.special = [t.content for t in added if t.special]
        # Non-special added tokens the template writes: transformers sanitizes them in content too.
        self.nonspecial_control = [t.content for t in added
                                   if not t.special and t.content in self.hf.chat_template]


def write_model_dir(name, dest, template=None):
    """The model directory as published (tokenizer.json, tokenizer_config.json, chat_template.jinja
    where the model has one), `template` (a file in tests/data/chat_templates) as its template."""
    src = TOKENIZERS / MODELS[name][0]
    dest.mkdir()
    decompress(src, dest)
    for f in ("tokenizer_config.json", "chat_template.jinja"):
        if (src / f).exists() and not (template and f == "chat_template.jinja"):
            (dest / f).write_bytes((src / f).read_bytes())
    template = template or MODELS[name][1]
    if template:
        config_path = dest / "tokenizer_config.json"
        config = (json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists()
                  else llama_config(dest / "tokenizer.json"))
        config["chat_template"] = (TEMPLATES / template).read_text(encoding="utf-8")
        config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    return dest


def llama_config(tokenizer_json, added_tokens=True):
    """Llama 3.2's tokenizer_config.json as Meta's lists its tokens: BOS, EOS (the instruct models'
    <|eot_id|>) and, in added_tokens_decoder, the tokenizer.json's 256 special tokens."""
    config = dict(LLAMA_CONFIG)
    if added_tokens:
        added = json.loads(tokenizer_json.read_text(encoding="utf-8"))["added_tokens"]
        config["added_tokens_decoder"] = {
            str(t["id"]): {k: t[k] for k in ("content", "lstrip", "normalized", "rstrip",
                                             "single_word", "special")} for t in added}
    return config


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """{name: Model} with the model's own template, and {name + "/training": Model} with the
    template that has {% generation %} markers."""
    root = tmp_path_factory.mktemp("real-tokenizers")
    out = {}
    for name in MODELS:
        out[name] = Model(name, write_model_dir(name, root / name))
        if name not in TRAINING:
            continue
        training = TRAINING[name]
        out[name + "/training"] = (Model(name, write_model_dir(name, root / (name + "-training"),
                                                               training))
                                   if training else out[name])
    return out


def clean(messages):
    return [{k: v for k, v in m.items() if v is not None} for m in messages]


def hf_ids(m, messages, tools, **kw):
    """transformers' ids (control-token text in the messages encoded as text), or the exception
    with which it refuses the conversation."""
    try:
        ids = m.hf.apply_chat_template(clean(messages), tools=tools, tokenize=True,
                                       return_dict=False, sanitize_control_tokens=True,
                                       **m.vars, **kw)
    except Exception as e:  # the template refuses the conversation
        return e
    return list(ids)


def holds(messages, tokens):
    text = json.dumps(messages, ensure_ascii=False)
    return any(t in text for t in tokens)


def variants(name):
    # (apply_chat_template encodes training conversations: no generation prompt.)
    return [{}, {"enable_thinking": False}] if name in ("qwen3", "smollm3") else [{}]


@pytest.mark.parametrize("name", list(MODELS))
def test_ids_equal_transformers(models, name):
    m = models[name]
    checked = refused = 0
    for conv, messages, tools in conversations():
        if holds(messages, m.nonspecial_control):
            continue  # test_nonspecial_control_token_text_in_content_stays_text
        for kw in variants(name):
            if (name, conv, kw.get("enable_thinking", True)) in OWN_TEST:
                continue
            want = hf_ids(m, messages, tools, **kw)
            if isinstance(want, Exception):
                with pytest.raises(ValueError):
                    m.tok.apply_chat_template(messages, tools, **m.vars, **kw)
                refused += 1
                continue
            ids, mask = m.tok.apply_chat_template(messages, tools, **m.vars, **kw)
            assert list(ids) == want, (conv, kw)
            assert len(mask) == len(ids)
            if not holds(messages, m.special):
                # No control-token text in the messages: one plain encoding of the rendered text.
                text = m.hf.apply_chat_template(clean(messages), tools=tools, tokenize=False,
                                                **m.vars, **kw)
                assert list(ids) == m.plain.encode(text, add_special_tokens=False).ids, (conv, kw)
            checked += 1
    assert refused == TEMPLATE_REFUSES.get(name, refused), (checked, refused)
    rendered = len(conversations()) - 2 - TEMPLATE_REFUSES.get(name, 0)
    assert checked >= len(variants(name)) * rendered, (checked, refused)


@pytest.mark.parametrize("name", list(TRAINING))
def test_masks_equal_transformers_generation_markers(models, name):
    m = models[name + "/training"]
    assert stoker.ChatTemplate(m.dir).has_generation
    checked = 0
    for conv, messages, tools in conversations():
        if holds(messages, m.special + m.nonspecial_control):
            continue  # return_assistant_tokens_mask cannot be combined with sanitizing
        try:
            want = m.hf.apply_chat_template(clean(messages), tools=tools, tokenize=True,
                                            return_dict=True, return_assistant_tokens_mask=True,
                                            **m.vars)
        except Exception:  # refused by the template (checked above)
            continue
        ids, mask = m.tok.apply_chat_template(messages, tools, **m.vars)
        assert list(ids) == list(want["input_ids"]), conv
        assert list(mask) == list(want["assistant_masks"]), conv
        assert (sum(mask) > 0) == any(x["role"] == "assistant" for x in messages), conv
        checked += 1
    assert checked >= 8


@pytest.mark.parametrize("name", list(MODELS))
def test_special_token_text_in_content_stays_text(models, name):
    """The model's own special tokens typed in messages are text: they never close a turn."""
    m = models[name]
    written = [t for t in m.special if t in m.hf.chat_template][:4]
    assert written
    messages = [{"role": "user", "content": "Say " + " then ".join(written) + "."},
                {"role": "assistant", "content": "Typed: " + "".join(written)},
                {"role": "user", "content": written[0] + "again" + written[-1]}]
    want = hf_ids(m, messages, None)
    ids, _ = m.tok.apply_chat_template(messages, **m.vars)
    assert list(ids) == want
    bare = hf_ids(m, [{"role": "user", "content": "Say"}, {"role": "assistant", "content": "Typed"},
                      {"role": "user", "content": "again"}], None)
    specials = {m.hf.convert_tokens_to_ids(t) for t in m.special}
    # As many control tokens as the same conversation without the typed ones: none came from content.
    assert sum(i in specials for i in ids) == sum(i in specials for i in bare)


@pytest.mark.parametrize("name", [n for n in MODELS if n != "llama3.2"])
def test_nonspecial_control_token_text_in_content_stays_text(models, name):
    """Qwen's <tool_call>, Qwen3's and SmolLM3's <think> are added tokens that are not special but
    that the template writes: transformers (sanitize_control_tokens) encodes them as text when a
    message holds them, as it does the special ones."""
    m = models[name]
    assert m.nonspecial_control
    typed = m.nonspecial_control[:3]
    messages = [{"role": "user", "content": "Say " + " and ".join(typed)},
                {"role": "assistant", "content": "Fine."}]
    ids, _ = m.tok.apply_chat_template(messages, **m.vars)
    assert list(ids) == hf_ids(m, messages, None)


@pytest.mark.parametrize("name", ["qwen3", "smollm3"])
def test_reasoning_written_in_content(models, name):
    """An assistant turn whose content holds its reasoning in <think>...</think> (how many SFT sets
    give it). SmolLM3's template writes the content whole: the typed tags stay text, as
    transformers' sanitize_control_tokens encodes them. Qwen3's splits the content at </think>
    and writes the reasoning between its own tags; marks cannot be followed through that split
    (transformers' sanitized ids then decode to another text than its own rendering, with doubled
    newlines), so the rendered text is encoded as tokenizers encodes it, every control token a
    token (docs/chat.md), and the reasoning is trained with the answer."""
    m = models[name]
    messages = [{"role": "user", "content": "Q"},
                {"role": "assistant", "content": "<think>\nhidden\n</think>\n\nvisible"}]
    ids, mask = m.tok.apply_chat_template(messages, **m.vars)
    if name == "smollm3":
        assert list(ids) == hf_ids(m, messages, None)
        return
    text = m.hf.apply_chat_template(messages, tokenize=False, **m.vars)
    assert m.hf.decode(hf_ids(m, messages, None)) != text
    assert list(ids) == m.hf.encode(text, add_special_tokens=False)
    trained = m.hf.decode([i for i, k in zip(ids, mask) if k])
    assert trained == "<think>\nhidden\n</think>\n\nvisible<|im_end|>", trained


def test_qwen3_list_content_is_refused_without_thinking(models):
    """Qwen3's template writes no text for content given as a list of parts. With
    enable_thinking=False its generation prompt (the assistant header, with an empty think block)
    is not what it writes for the turn, so the turn's span cannot be told: refused, naming the
    template (with thinking, the header is found and the turn trains its end of turn)."""
    m = models["qwen3"]
    messages = [{"role": "user", "content": [{"type": "text", "text": "Q"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "A"}]}]
    with pytest.raises(ValueError, match="tokenizer_config.json: no end-of-turn token"):
        m.tok.apply_chat_template(messages, enable_thinking=False)
    ids, mask = m.tok.apply_chat_template(messages)
    assert list(ids) == hf_ids(m, messages, None)
    assert m.hf.decode([i for i, k in zip(ids, mask) if k]) == "<|im_end|>"


def test_control_tokens_without_added_tokens_decoder(models, tmp_path):
    """A tokenizer_config.json without added_tokens_decoder (DeepSeek-R1-Distill's in
    ../data/tokenizers, or one naming only BOS, EOS and the template): transformers takes the
    special tokens from tokenizer.json, so their text typed in a message is still text."""
    d = tmp_path / "llama"
    d.mkdir()
    (d / "tokenizer.json").write_bytes((models["llama3.2"].dir / "tokenizer.json").read_bytes())
    config = llama_config(d / "tokenizer.json", added_tokens=False)
    config["chat_template"] = (TEMPLATES / "llama3_2.jinja").read_text(encoding="utf-8")
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    m = Model("llama3.2", d)
    messages = [{"role": "user", "content": "Say <|start_header_id|>user<|end_header_id|>"},
                {"role": "assistant", "content": "No."}]
    ids, _ = m.tok.apply_chat_template(messages, **m.vars)
    assert list(ids) == hf_ids(m, messages, None)


def test_qwen3_thinking_ids_and_masks(models):
    """reasoning_content: the last turn's reasoning is written in <think>, earlier turns'
    dropped; the mask of TRL's Qwen3 template trains the reasoning with the answer."""
    m, t = models["qwen3"], models["qwen3/training"]
    messages = [{"role": "user", "content": "Why is the sky blue?"},
                {"role": "assistant", "content": "Rayleigh.", "reasoning_content": "Old thoughts."},
                {"role": "user", "content": "And at sunset?"},
                {"role": "assistant", "content": "Red light.",
                 "reasoning_content": "Longer path.\nBlue scatters away."}]
    ids, _ = m.tok.apply_chat_template(messages)
    assert list(ids) == hf_ids(m, messages, None)
    text = m.hf.decode(ids)
    assert "<think>\nLonger path.\nBlue scatters away.\n</think>\n\nRed light." in text
    assert "Old thoughts" not in text
    ids, mask = t.tok.apply_chat_template(messages)
    want = t.hf.apply_chat_template(messages, tokenize=True, return_dict=True,
                                    return_assistant_tokens_mask=True)
    assert (list(ids), list(mask)) == (list(want["input_ids"]), list(want["assistant_masks"]))
    trained = t.hf.decode([i for i, k in zip(ids, mask) if k])
    assert "Longer path.\nBlue scatters away.\n</think>\n\nRed light.<|im_end|>" in trained


@pytest.mark.parametrize("name", list(MODELS))
def test_pack_stores_transformers_ids(models, name, stoker_cli, tmp_path):
    m = models[name]
    if m.vars:  # the CLI renders with the template's defaults: today's date for Llama 3.2
        m = Model(name, m.dir)
        m.vars = {}
    rows, want = [], []
    for conv, messages, tools in conversations():
        if holds(messages, m.nonspecial_control) or not any(x["role"] == "assistant" for x in messages):
            continue  # (pack keeps only conversations with something to train)
        ids = hf_ids(m, messages, tools)
        if isinstance(ids, Exception):
            continue
        rows.append({"messages": clean(messages), **({"tools": tools} if tools else {})})
        want.append(ids)
    assert len(rows) >= 7
    out = tmp_path / "sft"
    r = pack(stoker_cli, write_jsonl(tmp_path / "chats.jsonl", rows), "-o", out,
             "--tokenizer", m.dir)
    assert r.returncode == 0, r.stderr
    for i, ids in enumerate(want):
        doc = stoker.inspect(out, document=i)
        assert doc["tokens"] == ids, (name, i)
        assert 0 < doc["trained_tokens"] < len(ids), (name, i)


def test_files_are_the_pinned_ones(tmp_path):
    """Every tokenizer.json.xz here decompresses to the file the README pins, and the README pins
    no file that is not here."""
    pins = pinned_files()
    have = sorted(f"{p.parent.name}/tokenizer.json" for p in TOKENIZERS.glob("*/tokenizer.json.xz"))
    assert sorted(pins) == have
    for name in have:
        d = tmp_path / name.split("/")[0]
        d.mkdir()
        decompress(TOKENIZERS / name.split("/")[0], d)
        assert os.path.getsize(d / "tokenizer.json") == pins[name][0]


def test_generation_prompt_is_refused_not_ignored(models):
    """apply_chat_template encodes training conversations: asking for a generation prompt is an
    error, not a template variable that changes nothing."""
    m = models["qwen2.5"]
    messages = [{"role": "user", "content": "Q"}]
    for name in ("add_generation_prompt", "continue_final_message"):
        with pytest.raises(ValueError, match=name):
            m.tok.apply_chat_template(messages, **{name: True})
    messages.append({"role": "assistant", "content": "A"})
    ids, mask = m.tok.apply_chat_template(messages, add_generation_prompt=False)
    assert (list(ids), list(mask)) == tuple(map(list, m.tok.apply_chat_template(messages)))


def test_pack_and_stream_take_template_keyword_arguments(models, stoker_cli, tmp_path):
    """`stoker pack --chat-template-kwargs`, stoker.pack(chat_template_kwargs=) and
    stoker.Stream(chat_template_kwargs=) hand extra variables to the template, as
    apply_chat_template(**kwargs) does: SmolLM3's system block says /no_think with
    enable_thinking=False (and /think without it), so every conversation's ids change."""
    import numpy as np

    m = models["smollm3"]
    rows = [{"messages": [{"role": "user", "content": f"Question {i}?"},
                          {"role": "assistant", "content": f"Answer {i}."}]} for i in range(6)]
    src = write_jsonl(tmp_path / "chats.jsonl", rows)
    off = {"enable_thinking": False}
    want = [hf_ids(m, r["messages"], None, **off) for r in rows]
    assert all(w != hf_ids(m, r["messages"], None) for w, r in zip(want, rows))
    r = pack(stoker_cli, src, "-o", tmp_path / "cli", "--tokenizer", m.dir,
             "--chat-template-kwargs", json.dumps(off))
    assert r.returncode == 0, r.stderr
    assert [stoker.inspect(tmp_path / "cli", document=i)["tokens"] for i in range(6)] == want
    stoker.pack(src, tmp_path / "py", str(m.dir), chat_template_kwargs=off)
    assert [stoker.inspect(tmp_path / "py", document=i)["tokens"] for i in range(6)] == want
    stream = stoker.Stream([src], tokenizer=str(m.dir), shuffle_buffer=1,
                           chat_template_kwargs=off)
    seen = []
    for batch in stoker.Loader(stream, seq_len=512, batch_size=1, pack="bestfit",
                               output="numpy", num_workers=1):
        seg = batch["segment_ids"][0]
        for s in sorted(set(seg.tolist()) - {0}):
            seen.append(batch["input_ids"][0][np.nonzero(seg == s)[0]].tolist())
    # Equal steps may leave a stream's last row out: every conversation served is one of them.
    assert seen and all(ids in want for ids in seen)
    r = pack(stoker_cli, src, "-o", tmp_path / "bad", "--tokenizer", m.dir,
             "--chat-template-kwargs", "[1]")
    assert r.returncode != 0
    assert "--chat-template-kwargs must be a JSON object" in r.stderr
