"""Chat ids and loss masks with SentencePiece-style tokenizers (docs/chat.md, "Ids"): Phi-3's
real tokenizer.json (Prepend normalizer, byte fallback, rstrip control tokens) with its own
template and Phi-3.5's, and Llama 2's real tokenizer.model as transformers' LlamaConverter turns it
into a tokenizer.json, with Gemma's template (its <start_of_turn>/<end_of_turn> added as special
tokens to a test-built copy). On generated conversations (CJK, emoji through byte fallback, an
empty system prompt, control-token text in content, leading and trailing spaces and newlines):
the text equals transformers' rendering, the ids equal its apply_chat_template(tokenize=True)
(sanitized where content holds control-token text), and the mask equals the documented rule
computed on `tokenizers`' own offsets of the rendered text, independent of stoker's alignment."""

import json
import random
from pathlib import Path

import pytest

import stoker
from chat_testlib import pack, write_jsonl
from sp_cases import mistral_model, sp_tokenizer_json

transformers = pytest.importorskip("transformers")

DATA = Path(__file__).resolve().parents[1] / "data"
PHI3 = DATA / "tokenizers" / "phi-3-mini-4k-instruct"
LLAMA2_MODEL = DATA / "tokenizers" / "llama-2" / "tokenizer.model"
TEMPLATES = DATA / "chat_templates"
CONTROL_TEXT = "Say <|end|> then <|user|>, or <|assistant|>."


def m(role, content):
    return {"role": role, "content": content}


def conversations():
    """(name, messages): hand-made edge cases, then seeded random multi-turn conversations."""
    convs = [
        ("plain", [m("system", "You are nice."), m("user", "Hi there, how are you?"),
                   m("assistant", "Fine, thanks. And you?")]),
        ("empty_system", [m("system", ""), m("user", "你好，世界"),
                          m("assistant", "こんにちは 😀 🎉 emoji"), m("user", "Ok"),
                          m("assistant", "Bye 👋")]),
        ("spaces", [m("user", "  leading and trailing  "), m("assistant", " y "),
                    m("user", "\n\nnewlines\n"), m("assistant", "\nfirst\nand last\n\n")]),
        ("control_text", [m("user", CONTROL_TEXT), m("assistant", "Sure: <|end|> <|user|>")]),
        ("digits", [m("user", "1 2 3"), m("assistant", "456 7.8e9 -0")]),
    ]
    rng = random.Random(25)
    words = ["the", "cat", "naïve", "über", "日本語", "テスト", "🙂", "🐍🐍", "é", "x", "  ", "\n",
             "tab\t", "Ωμέγα", "ñandú", "2024", "?!", "a\u0301", "<b>", "中"]
    for k in range(20):
        msgs = [m("system", " ".join(rng.choices(words, k=3)))] if k % 3 == 0 else []
        for turn in range(rng.randint(1, 3)):
            msgs.append(m("user", " ".join(rng.choices(words, k=rng.randint(1, 8)))))
            msgs.append(m("assistant", " ".join(rng.choices(words, k=rng.randint(1, 8)))))
        convs.append((f"random{k}", msgs))
    return convs


def hf_ids(hf, messages, **kw):
    ids = hf.apply_chat_template(messages, tokenize=True, sanitize_control_tokens=True, **kw)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def rule_mask(offsets, spans):
    """docs/chat.md: a token is trained when its characters overlap a trained span (a token of
    no characters: when it lies inside one)."""
    return [int(any((b < f and s < e) or (b == e and s <= b < f) for s, f in spans))
            for b, e in offsets]


def check_model(hf, tok, template, template_path=None):
    """Checks every conversation the template renders; returns how many were checked."""
    kw = {"chat_template": template_path.read_text(encoding="utf-8")} if template_path else {}
    checked = 0
    for name, messages in conversations():
        try:
            want_text = hf.apply_chat_template(messages, tokenize=False, **kw)
        except Exception:  # the template refuses the conversation (Gemma: no system role)
            continue
        text, spans = template.spans(messages)
        assert text == want_text, name
        ids, mask = tok.apply_chat_template(messages, chat_template=template_path)
        assert list(ids) == hf_ids(hf, messages, **kw), name
        if "<|" not in json.dumps(messages):  # no control-token text: one plain encoding
            enc = hf._tokenizer.encode(text, add_special_tokens=False)
            assert list(ids) == enc.ids, name
            assert list(mask) == rule_mask(enc.offsets, spans), name
        assert 0 < sum(mask) < len(mask), name
        checked += 1
    return checked


@pytest.fixture(scope="module")
def phi3():
    return transformers.AutoTokenizer.from_pretrained(PHI3)


def test_phi3_own_template_ids_and_masks_equal_transformers(phi3):
    n = check_model(phi3, stoker.Tokenizer(PHI3), stoker.ChatTemplate(PHI3))
    assert n == len(conversations())


def test_phi3_5_template_ids_and_masks_equal_transformers(phi3):
    path = TEMPLATES / "phi3_5.jinja"
    template = stoker.ChatTemplate(path, config_dir=PHI3)
    n = check_model(phi3, stoker.Tokenizer(PHI3), template, path)
    assert n == len(conversations())


def test_phi3_ids_of_the_issue():
    messages = conversations()[0][1]
    ids, mask = stoker.Tokenizer(PHI3).apply_chat_template(messages)
    assert list(ids) == [1, 32010, 18567, 727, 29892, 920, 526, 366, 29973, 32007, 32001, 29943,
                         457, 29892, 3969, 29889, 1126, 366, 29973, 32007]
    assert list(mask) == [0] * 11 + [1] * 9  # "Fine, thanks. And you?<|end|>"


def model_dir(d, template_name, control):
    """Writes d/tokenizer_config.json (BOS <s>, EOS </s>, the template, `control` {id: text} as
    its special tokens) beside d/tokenizer.json; returns transformers' tokenizer of the same."""
    template = (TEMPLATES / template_name).read_text(encoding="utf-8")
    config = {"bos_token": "<s>", "eos_token": "</s>", "chat_template": template,
              "added_tokens_decoder": {str(i): {"content": c, "special": True}
                                       for i, c in control.items()}}
    (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(d / "tokenizer.json"),
                                                bos_token="<s>", eos_token="</s>",
                                                chat_template=template)


@pytest.fixture(scope="module")
def llama2_gemma(tmp_path_factory):
    """Llama 2's tokenizer.json (LlamaConverter's legacy layout: a dummy prefix after every added
    token) with Gemma's turn tokens added, and Gemma's template."""
    from tokenizers import AddedToken, Tokenizer

    d = tmp_path_factory.mktemp("llama2-gemma")
    sp_tokenizer_json(LLAMA2_MODEL, d / "tokenizer.json", "legacy")
    t = Tokenizer.from_file(str(d / "tokenizer.json"))
    t.add_special_tokens([AddedToken(s, normalized=False, special=True)
                          for s in ("<start_of_turn>", "<end_of_turn>")])
    t.save(str(d / "tokenizer.json"))
    control = {t.token_to_id(s): s for s in ("<s>", "</s>", "<start_of_turn>", "<end_of_turn>")}
    return d, model_dir(d, "gemma.jinja", control)


def test_llama2_gemma_template_ids_and_masks_equal_transformers(llama2_gemma):
    d, hf = llama2_gemma
    n = check_model(hf, stoker.Tokenizer(d), stoker.ChatTemplate(d))
    assert n >= 15  # Gemma's template refuses a system message


@pytest.fixture(scope="module")
def mistral_v3(tmp_path_factory):
    """Mistral 7B v0.3's SentencePiece model (mistral-common's) as the tokenizer.json published
    beside it (LlamaConverter's legacy layout; [INST], [/INST] and its other control pieces added
    as special tokens), with Mistral Nemo's [INST] template."""
    from tokenizers import Tokenizer

    d = tmp_path_factory.mktemp("mistral-v3")
    sp_tokenizer_json(mistral_model("v3"), d / "tokenizer.json", "legacy")
    t = Tokenizer.from_file(str(d / "tokenizer.json"))
    control = {i: a.content for i, a in t.get_added_tokens_decoder().items() if a.special}
    return d, model_dir(d, "mistral_nemo.jinja", control)


def test_mistral_v3_ids_and_masks_equal_transformers(mistral_v3):
    d, hf = mistral_v3
    assert "[INST]" in stoker.ChatTemplate(d).spans(conversations()[0][1])[0]
    assert check_model(hf, stoker.Tokenizer(d), stoker.ChatTemplate(d)) >= 20


def test_pack_phi3_chats_stores_the_mask(stoker_cli, tmp_path):
    convs = [c for _, c in conversations()]
    src = write_jsonl(tmp_path / "chats.jsonl", [{"messages": c} for c in convs])
    out = tmp_path / "sft"
    r = pack(stoker_cli, src, "-o", out, "--tokenizer", PHI3)
    assert r.returncode == 0, r.stderr
    tok = stoker.Tokenizer(PHI3)
    for i, messages in enumerate(convs):
        ids, mask = tok.apply_chat_template(messages)
        doc = stoker.inspect(out, document=i)
        assert doc["tokens"] == list(ids), i
        assert doc["loss_mask"] == list(mask), i
        assert doc["trained_tokens"] == sum(mask) > 0


def test_a_bare_sentencepiece_model_is_refused_for_chat(stoker_cli, tmp_path):
    """transformers encodes a chat with a tokenizer converted from the .model (control tokens read
    in the rendered text); stoker reads a bare .model as sentencepiece does, so its chat ids would
    differ. Refused as bad input (ValueError, never NotImplementedError: issue 44), naming what
    to give instead, in Python and in `stoker pack`."""
    d = tmp_path / "llama2"
    d.mkdir()
    (d / "tokenizer.model").write_bytes(LLAMA2_MODEL.read_bytes())
    template = (TEMPLATES / "phi3_5.jinja").read_text(encoding="utf-8")
    (d / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<s>", "eos_token": "</s>", "chat_template": template}),
        encoding="utf-8")
    messages = conversations()[0][1]
    with pytest.raises(ValueError, match="needs the model's tokenizer.json"):
        stoker.Tokenizer(d / "tokenizer.model").apply_chat_template(messages)
    src = write_jsonl(tmp_path / "chats.jsonl", [{"messages": messages}])
    r = pack(stoker_cli, src, "-o", tmp_path / "sft", "--tokenizer", d / "tokenizer.model")
    assert r.returncode != 0
    assert "needs the model's tokenizer.json" in r.stderr
