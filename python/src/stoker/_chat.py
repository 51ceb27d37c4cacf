"""stoker.ChatTemplate: a model's chat template rendered as transformers renders it, and the
loss-mask rule of ``--train-on`` (docs/chat.md)."""

from __future__ import annotations

import json
import os
from typing import Any, Optional

from . import _stoker


def chat_record(messages: Any, tools: Optional[list] = None) -> dict:
    """A conversation record from a list of messages, or a record as it is (``messages``,
    ``conversations`` or ``prompt`` + ``completion``), with ``tools`` added when given."""
    record = dict(messages) if isinstance(messages, dict) else {"messages": list(messages)}
    if tools is not None:
        record["tools"] = tools
    return record


def char_spans(text: str, byte_spans) -> list:
    """Byte ranges of ``text``'s UTF-8 as ranges of its characters."""
    data = text.encode("utf-8")
    return [(len(data[:b].decode("utf-8")), len(data[:e].decode("utf-8"))) for b, e in byte_spans]


class ChatTemplate:
    """The chat template of a model directory (``chat_template.jinja`` or tokenizer_config.json's
    ``chat_template``) or of a template file (``config_dir`` then gives its special tokens)."""

    def __init__(self, path: str | os.PathLike, *, config_dir: str | os.PathLike | None = None):
        self._t = _stoker._chat_template(os.fspath(path), os.fspath(config_dir or ""))

    @property
    def has_generation(self) -> bool:
        """Whether the template marks its trained text with ``{% generation %}``."""
        return self._t.has_generation

    def render(self, messages, tools: Optional[list] = None, *, add_generation_prompt: bool = False,
               **kwargs) -> str:
        """The text of the conversation, as ``apply_chat_template(..., tokenize=False)``."""
        return self._t.render(json.dumps(chat_record(messages, tools)), add_generation_prompt,
                              json.dumps(kwargs))

    def spans(self, messages, tools: Optional[list] = None, *, train_on: str = "assistant",
              **kwargs):
        """``(text, spans)``: the rendered text and the character ranges that are trained."""
        text, spans = self._t.spans(json.dumps(chat_record(messages, tools)), train_on,
                                    json.dumps(kwargs))
        return text, char_spans(text, spans)
