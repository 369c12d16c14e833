"""How ``reyn``'s text output shows a value that is not its own: a tool's name and description, a
plugin's metadata, a diagnostic's message — text a remote server, a snapshot or a plugin wrote.

Every such field is shown by the one rule Reyn shows a remote party's text by
(``unicode_text.escape_unprintable``, as ``remote_log.shown_raw`` does for the operator's log): each
character Python does not call printable (C0 and C1 controls such as ``ESC``, bidi overrides,
zero-width characters, line separators…) as its ``\\xNN`` / ``\\uNNNN`` escape and a backslash
doubled, so no field can clear or recolour the terminal, reorder the text around it, or pass for
another line. Printable text — accents, CJK, emoji — reads as written. JSON output (``--json``) is
not touched: JSON escapes what it must, and a script reads the value itself.

The escaping works character by character, so a line Reyn composes of printable words and fields is
shown field by field when the whole line is shown (``shown``); only a text whose line breaks are
Reyn's own structure is shown line by line (``shown_lines``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..unicode_text import escape_unprintable


def shown(value: object) -> str:
    """``str(value)`` as one field (or one line) of text output: everything unprintable escaped,
    line breaks and tabs too, so it stays one line and one cell."""
    return escape_unprintable(str(value))


def shown_lines(text: str) -> str:
    """A text whose line breaks are its structure (a rendered prompt), each line ``shown``."""
    return "\n".join(shown(line) for line in text.split("\n"))


def printable_json(value: Any) -> str:
    """``value`` as indented JSON for a text command's output, each character Python does not call
    printable written as its JSON escape (``\\u001b``, ``\\u202e``; a pair for one beyond
    U+FFFF): the same value to a JSON reader, nothing a terminal acts on. (Such characters only
    occur inside strings: the indentation's line breaks and spaces are printable or kept.)"""
    import json

    text = json.dumps(value, indent=2, ensure_ascii=False)
    return "\n".join(
        line if line.isprintable() else "".join(map(_json_char, line)) for line in text.split("\n")
    )


def _json_char(ch: str) -> str:
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def shown_data(value: Any) -> Any:
    """JSON-like ``value`` with every string in it (member names too) ``shown``: what a text renderer
    reads, so each field it prints is escaped whatever line it is printed in. Numbers, booleans and
    None are kept (a renderer compares and formats them)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, Mapping):
        return {shown(k) if isinstance(k, str) else k: shown_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shown_data(v) for v in value]
    return value


__all__ = ["printable_json", "shown", "shown_data", "shown_lines"]
