"""One spelling per idea across stoker's Python surface: the shared readings of options.

- threads: ``num_workers`` (torch's name; the CLI's ``--num-workers``); ``threads`` and
  ``num_threads`` are deprecated aliases.
- bad input: ``on_error="fail"|"skip"``; ``bad_lines`` is a deprecated alias.
- no cache: ``None``; ``"off"`` and ``""`` are deprecated spellings of it.
- ranks: ``rank``, then ``world_size``, always by keyword (by position: deprecated).
- the last incomplete batch: ``remainder="drop_last"|"pad"`` (the CLI's ``--remainder``);
  ``drop_last=True/False`` is a deprecated alias.
- shuffle: ``True`` is the default global shuffle, ``False`` is none (source order), as torch's
  ``shuffle=True/False``; or a mode by name: "global", "block", "none".
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Optional

_UNSET: Any = object()  # "not given", where None has a meaning of its own

# The deprecated keyword spellings of an option, by its one spelling.
DEPRECATED = {"num_workers": ("threads", "num_threads"), "on_error": ("bad_lines",),
              "remainder": ("drop_last",)}


def deprecated(old: str, new: str, stacklevel: int = 3) -> None:
    """Warns that ``old`` is a deprecated spelling of ``new`` (at the user's call)."""
    warnings.warn(f"stoker: {old} is deprecated; use {new}", DeprecationWarning,
                  stacklevel=stacklevel)


def alias(value: Any, old_value: Any, old: str, new: str, default: Any) -> Any:
    """``value`` (the one spelling) or, when only the deprecated ``old`` was given, its value.

    ``value is _UNSET`` means not given; giving both is a ValueError.
    """
    if old_value is _UNSET:
        return default if value is _UNSET else value
    if value is not _UNSET and value != default:
        raise ValueError(f"give {new}= only ({old}= is its deprecated spelling)")
    deprecated(f"{old}=", f"{new}=", stacklevel=4)
    return old_value


def shuffle_name(shuffle: Any) -> str:
    """True -> "global" (the default), False -> "none"; a name is returned as given."""
    if shuffle is True:
        return "global"
    if shuffle is False:
        return "none"
    if isinstance(shuffle, str):
        return shuffle
    raise ValueError(f"shuffle must be True, False, 'global', 'block' or 'none', not {shuffle!r}")


def paths(inputs: Any) -> list:
    """One path or a sequence of them, as a list of str."""
    return [os.fspath(p) for p in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]


def fill(options: Any, **fields: Any) -> Any:
    """``options`` (a C++ option struct) with ``fields`` set on it, in the order given."""
    for name, value in fields.items():
        setattr(options, name, value)
    return options


def cache_dir(value: Any, name: str) -> Optional[str]:
    """None (no cache), "auto" or a directory; "off" and "" are read as None, with a warning."""
    if value is None:
        return None
    value = os.fspath(value)
    if value in ("off", ""):
        deprecated(f"{name}={value!r}", f"{name}=None (no cache)", stacklevel=4)
        return None
    return value
