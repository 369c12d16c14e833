"""Text UTF-8 cannot carry: a lone surrogate in a ``str``.

A Python ``str`` can hold a UTF-16 surrogate code point (U+D800..U+DFFF) on its own — what JSON's
``"\\ud800"`` decodes to, what a file read with ``surrogateescape`` holds, what a plugin may build —
and no UTF-8 text can (a pair is one character in a ``str``, so any surrogate found is lone). Every
way out of Reyn writes UTF-8 (an MCP message, an LLM request body, a terminal), so such text is
found here, once, where it leaves: data (a tool's result, a log's data, a definition) is refused
naming where (``lone_surrogate_at``); a message (an error's text, a progress line) is shown with
each lone surrogate as its ``\\udXXXX`` escape (``escape_lone_surrogates``). Hashing keeps them
(``.encode("utf-8", "surrogatepass")``: a lone surrogate hashes like anything else).

The same walk finds the other leaf JSON cannot carry, a number that is not finite (``NaN``,
``Infinity``: RFC 8259 has neither, and ``json.dumps`` would write them as text no peer must accept):
``unsendable_at`` answers where the first leaf of either kind is, for what ``dispatch_tool`` sends.
``json_text_unsendable_at`` answers it with a value's JSON text, from that one encoding: what the
registry's checks use, which need the text anyway (the size bound), so a definition is encoded once.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD_KEY: Any = object()  # in lone_surrogate_at's walk: the object above holds a member name with one


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (ASCII text answers at once; other text is encoded,
    which in C is several times faster than a search, and stops at the first one)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def escape_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``"a\\ud800"`` → ``"a\\\\ud800"``):
    what a message holding one still says, in text UTF-8 can carry. Other text is returned as is."""
    if not has_lone_surrogate(text):
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape_unprintable(text: str, keep: str = "") -> str:
    """``text`` with every character Python does not call printable — controls (C0, C1: ``ESC``,
    ``CSI``…), format characters such as bidi overrides and zero-width ones, line and paragraph
    separators, lone surrogates… — but those in ``keep`` written as its ``\\xNN``/``\\uNNNN``/
    ``\\UNNNNNNNN`` escape, and a backslash doubled (so no text can pass for an escape): the one rule
    by which Reyn shows a remote party's text to an operator (a log record, a line of ``reyn``'s
    text output). Printable text (accents, CJK, emoji) is returned as is. Linear in the size."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(_escaped_char(ch, keep) for ch in text)


def _escaped_char(ch: str, keep: str) -> str:
    if ch == "\\":
        return "\\\\"
    if ch in keep or ch.isprintable():
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _holds_any(value: Any, numbers: bool) -> bool:
    """Whether a string anywhere in ``value`` (a key or a value, in mappings and lists) holds a lone
    surrogate — or, with ``numbers``, a float anywhere is not finite. One iterative pass, no pointers
    built: the common case, where none does. A container met again (shared, or holding itself) is not
    walked again: linear, and a cycle ends."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str or isinstance(node, str):
            if has_lone_surrogate(node):
                return True
            continue
        if isinstance(node, float):
            if numbers and not math.isfinite(node):
                return True
            continue
        if kind is dict or isinstance(node, Mapping):
            items: Any = node.items()
        elif kind is list or isinstance(node, list | tuple):
            items = enumerate(node)
        else:
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        for key, item in items:
            # a member name as ``_first_at`` reads it (``str(key)``: a host's dict may hold any key)
            if (type(key) is not str or not key.isascii()) and type(key) is not int:
                if has_lone_surrogate(str(key)):
                    return True
            kind = type(item)
            if kind is str:  # the common leaves, checked here rather than pushed
                if not item.isascii() and has_lone_surrogate(item):
                    return True
            elif kind is float:
                if numbers and not math.isfinite(item):
                    return True
            elif kind not in _SCALARS:
                stack.append(item)
    return False


_SCALARS = frozenset({int, float, bool, type(None)})


def lone_surrogate_at(value: Any) -> tuple[str, str] | None:
    """Where the first string of JSON data ``value`` holding a lone surrogate is, in document order:
    ``(pointer, "value")`` for a string (``""`` is ``value`` itself), ``(pointer, "key")`` for a
    member name (the pointer names the object holding it: the name itself cannot be written) — or
    None when every string is valid Unicode. Keys and list indexes are escaped as RFC 6901 says.
    Iterative and linear in the data's size (a container met again is not walked again)."""
    return _first_at(value, numbers=False)


def unsendable_at(value: Any) -> tuple[str, str] | None:
    """Where the first leaf of JSON data ``value`` that JSON in UTF-8 cannot carry is, in document
    order: ``lone_surrogate_at``'s answers, or ``(pointer, "number")`` for a float that is not finite
    (``NaN``, ``Infinity``, ``-Infinity``); None when there is none. The same one walk."""
    return _first_at(value, numbers=True)


def json_text_unsendable_at(value: Any) -> tuple[str, tuple[str, str] | None]:
    """``json.dumps(value)`` (its defaults: ASCII, a non-finite float written ``NaN`` / ``Infinity``)
    and ``unsendable_at(value)``, from the one encoding: in that text a lone surrogate is always a
    ``\\ud8..``-``\\udf..`` escape (lower-case hex; in a key too) and a float that is not finite
    always ``NaN`` or ``Infinity``, so where the text holds neither, the walk would find nothing and is
    not run (a property test holds this); where it does (an emoji is a surrogate pair's escapes, a
    description may say "Infinity"), the walk answers. Raises what ``json.dumps`` raises."""
    text = json.dumps(value)
    if "\\ud" not in text and "NaN" not in text and "Infinity" not in text:
        return text, None
    return text, _first_at(value, numbers=True)


def _first_at(value: Any, numbers: bool) -> tuple[str, str] | None:
    if not _holds_any(value, numbers):
        return None
    stack: list[tuple[str, Any]] = [("", value)]
    seen: set[int] = set()
    while stack:
        pointer, node = stack.pop()
        if node is _BAD_KEY:
            return pointer, "key"
        if isinstance(node, Mapping | list | tuple):
            if id(node) in seen:
                continue
            seen.add(id(node))
        if isinstance(node, str):
            if has_lone_surrogate(node):
                return pointer, "value"
        elif isinstance(node, float):
            if numbers and not math.isfinite(node):
                return pointer, "number"
        elif isinstance(node, Mapping):
            children = []
            for key, item in node.items():
                name = str(key)
                if has_lone_surrogate(name):  # found after its earlier siblings' values
                    children.append((pointer, _BAD_KEY))
                    break
                children.append((f"{pointer}/{name.replace('~', '~0').replace('/', '~1')}", item))
            stack.extend(reversed(children))
        elif isinstance(node, list | tuple):
            stack.extend(reversed([(f"{pointer}/{i}", item) for i, item in enumerate(node)]))
    return None  # not reached: _holds_any found one


def describe_lone_surrogate(found: tuple[str, str]) -> str:
    """``lone_surrogate_at``'s (or ``unsendable_at``'s) answer in words: ``at /a/0`` / ``in a key of
    the object at /a``."""
    pointer, what = found
    where = pointer or "the root"
    return f"in a key of the object at {where}" if what == "key" else f"at {where}"


__all__ = [
    "describe_lone_surrogate",
    "escape_lone_surrogates",
    "escape_unprintable",
    "has_lone_surrogate",
    "json_text_unsendable_at",
    "lone_surrogate_at",
    "unsendable_at",
]
