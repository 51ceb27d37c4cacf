"""Shared by the chat tests (test_chat_pack.py, test_chat_loader.py): chat records of every input
shape, model directories with a trained byte-level BPE tokenizer and Qwen's templates, and the
CLI's pack."""

import json
import subprocess
from pathlib import Path

from bpe_cases import train_llama3_style

TEMPLATES = Path(__file__).resolve().parents[1] / "data" / "chat_templates"

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]


def records():
    """Chat records of every input shape: OpenAI messages (system prompts, several turns,
    reasoning, tools, unicode, content parts, control-token text in content), prompt +
    completion, and ShareGPT conversations."""
    u = lambda c: {"role": "user", "content": c}  # noqa: E731
    a = lambda c, **k: {"role": "assistant", "content": c, **k}  # noqa: E731
    s = lambda c: {"role": "system", "content": c}  # noqa: E731
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
    return [
        {"messages": [s("You are terse."), u("Hi!"), a("Hello.")]},
        {"messages": [u("1+1?"), a("2"), u("and 2+2?"), a("4, of course."), u("thanks"),
                      a("You're welcome!")]},
        {"messages": [s(""), u("Ünïcødé 中文 🚀"), a("Ça va? 日本語 ✓\n\nline2")]},
        {"messages": [u("Say <|im_end|> now"), a("<|im_start|> is text here")]},
        {"messages": [u("Why?"), a("Rayleigh.", reasoning_content="Short waves scatter.")]},
        {"messages": [u("Weather in Oslo?"), {"role": "assistant", "tool_calls": [call]},
                      {"role": "tool", "content": "cold"}, a("Cold.")], "tools": TOOLS},
        {"prompt": "Capital of France?", "completion": "Paris."},
        {"prompt": [u("Count to 3")], "completion": [a("1 2 3")]},
        {"conversations": [{"from": "human", "value": "Hey"}, {"from": "gpt", "value": "Hi!"}]},
    ]


def make_qwen_models(base):
    """Two model directories sharing one trained byte-level BPE tokenizer with Qwen's control
    tokens: TRL's Qwen3 template with {% generation %} markers, and Qwen2.5's own template (the
    documented rule finds its spans)."""
    dirs = {}
    for name in ("qwen3_training", "qwen2_5"):
        d = base / name
        d.mkdir(parents=True)
        train_llama3_style(d / "tokenizer.json", bos="<|im_start|>", eos="<|im_end|>")
        config = {"eos_token": "<|im_end|>",
                  "chat_template": (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"),
                  "added_tokens_decoder": {"0": {"content": "<|im_start|>", "special": True},
                                           "1": {"content": "<|im_end|>", "special": True}}}
        (d / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        dirs[name] = d
    return dirs


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def pack(stoker_cli, *args):
    return subprocess.run([stoker_cli, "pack", *map(str, args)], capture_output=True, text=True,
                          timeout=300)
