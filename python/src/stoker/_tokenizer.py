"""stoker.Tokenizer: the tokenizers of ``stoker pack`` from Python."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Optional, Sequence, Union

from . import _spelling, _stoker


class Tokenizer:
    """A tokenizer as ``stoker pack --tokenizer`` opens it: ``"bytes"``, a SentencePiece
    ``.model``, a ``tokenizer.json``, a model directory (its tokenizer_config.json gives the EOS)
    or a tiktoken file (with ``pattern``: r50k, p50k, cl100k, o200k, llama3, llama4 or a regex).

    ``allow_special``: special-token text in the input becomes the special id (tiktoken's
    ``allowed_special="all"``); by default it is ordinary text (``encode_ordinary``).
    ``special``: a tiktoken file's special tokens as ``"NAME=ID,..."``. ``eos``: the EOS token
    by text or id. ``post_processor=False`` ignores a tokenizer.json's template (e.g. BOS).
    Thread-safe: ``encode``, ``encode_batch`` and ``decode`` release the GIL.
    """

    def __init__(self, path: str | os.PathLike, pattern: Optional[str] = None, *,
                 special: Optional[str] = None, allow_special: bool = False,
                 eos: Optional[str | int] = None, post_processor: bool = True):
        self._t = _stoker._open_tokenizer(
            os.fspath(path), tokenizer_options(pattern, special, allow_special, eos, post_processor))
        self._path, self._pattern, self._special, self._eos = os.fspath(path), pattern, special, eos
        self._chat = None  # (chat_template path or "", its chat encoder)

    @property
    def vocab_size(self) -> int:
        return self._t.vocab_size

    @property
    def eos_id(self) -> int:
        return self._t.eos_id

    @property
    def kind(self) -> str:
        return self._t.kind

    @property
    def name(self) -> str:
        return self._t.name

    def encode(self, text: str, *, numpy: bool = False):
        """The ids of ``text`` (no EOS): a list, or an int32 NumPy array with ``numpy=True``."""
        return self._t.encode(text, numpy)

    def encode_batch(self, texts: Sequence[str], num_workers: int = 0, *, numpy: bool = False,
                     num_threads: Any = _spelling._UNSET):
        """The ids of each text, encoded on ``num_workers`` threads (0 = cores / LOCAL_WORLD_SIZE): the calling
        thread and threads of a pool that lives across calls. The GIL is released while encoding
        and taken by each thread only to build the Python objects of what it encoded.
        ``num_threads`` is the deprecated spelling of ``num_workers``."""
        num_workers = _spelling.alias(num_workers, num_threads, "num_threads", "num_workers", 0)
        return self._t.encode_batch(list(texts), num_workers, numpy)

    def decode(self, ids: Iterable[int], errors: str = "strict") -> str:
        """The text of ``ids``; ``errors`` as in ``bytes.decode`` for ids that split a
        character."""
        return self._t.decode_bytes([int(i) for i in ids]).decode("utf-8", errors)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return self._t.decode_bytes([int(i) for i in ids])

    def apply_chat_template(self, messages, tools: Optional[list] = None, *,
                            train_on: str = "assistant", chat_template: str | os.PathLike | None = None,
                            **kwargs):
        """``(ids, mask)`` of one conversation: the model's chat template rendered (the model
        directory's, or ``chat_template``, a file) and tokenized with the template's control tokens
        as control tokens and special-token text inside the messages as ordinary text; ``mask`` is
        1 on the tokens ``train_on`` trains (assistant, last, completion or all; docs/chat.md).
        ``messages``: a list of messages, or a record with ``messages``, ``conversations`` or
        ``prompt`` + ``completion``. Other keyword arguments are template variables.
        ``add_generation_prompt`` and ``continue_final_message`` are refused: this encodes a whole
        training conversation (``ChatTemplate.render`` takes ``add_generation_prompt``)."""
        from ._chat import chat_record

        for name in ("add_generation_prompt", "continue_final_message"):
            if kwargs.pop(name, False):
                raise ValueError(f"apply_chat_template encodes a whole training conversation: "
                                 f"{name} is not supported (stoker.ChatTemplate.render takes "
                                 f"add_generation_prompt)")

        where = os.fspath(chat_template) if chat_template is not None else ""
        if self._chat is None or self._chat[0] != where:
            # `stoker pack`'s encoder: control tokens, the dummy prefix where transformers puts it
            # for this model (docs/chat.md, "Ids"), no post-processor.
            options = tokenizer_options(self._pattern, self._special, False, self._eos, False)
            self._chat = (where, _stoker._chat_encoder(self._path, where, options))
        return self._chat[1].encode(json.dumps(chat_record(messages, tools)), train_on,
                                    json.dumps(kwargs))

    def __repr__(self) -> str:
        return f"stoker.Tokenizer({self.name!r}, kind={self.kind!r}, vocab_size={self.vocab_size})"


def tokenizer_options(pattern: Optional[str] = None, special: Optional[str] = None,
                      allow_special: bool = False, eos: Optional[Union[str, int]] = None,
                      post_processor: bool = True):
    """The C++ TokenizerOptions from the keyword arguments every tokenizer-taking call shares."""
    t = _stoker.TokenizerOptions()
    t.pattern = pattern or ""
    t.special = special or ""
    t.allow_special = bool(allow_special)
    t.eos = "" if eos is None else str(eos)
    t.post_processor = bool(post_processor)
    return t


def template_kwargs_json(kwargs: Optional[dict]) -> str:
    """``chat_template_kwargs`` (a dict of extra chat-template variables) as the C++ options take
    it: JSON text, "" for none."""
    if kwargs is None:
        return ""
    if not isinstance(kwargs, dict):
        raise TypeError(f"chat_template_kwargs must be a dict, got {type(kwargs).__name__}")
    return json.dumps(kwargs)
