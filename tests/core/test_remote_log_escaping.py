"""``shown_raw`` escapes by construction: every character Python does not call printable (but tab
and newline) and the backslash itself — not a list of known controls. Each attack beside its
control: printable text, accents, CJK and emoji read as written."""

from __future__ import annotations

import sys

import pytest

from reyn_core.remote_log import shown_raw

HOSTILE = {
    "\u202e": "\\u202e",  # right-to-left override: reorders what follows on screen
    "\u2066": "\\u2066",  # left-to-right isolate
    "\u2069": "\\u2069",  # pop directional isolate
    "\u061c": "\\u061c",  # Arabic letter mark
    "\u200f": "\\u200f",  # right-to-left mark
    "\u200b": "\\u200b",  # zero-width space
    "\ufeff": "\\ufeff",  # byte order mark
    "\ud800": "\\ud800",  # a lone surrogate
    "\U000e0041": "\\U000e0041",  # a tag character
    "\x1b": "\\x1b",
    "\r": "\\x0d",
    "\x85": "\\x85",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


@pytest.mark.parametrize("char", list(HOSTILE))
def test_every_unprintable_character_is_escaped(char: str) -> None:
    shown = shown_raw(f"a{char}b")
    assert shown == f"a{HOSTILE[char]}b" and shown.isprintable()


def test_a_backslash_cannot_pass_for_an_escape() -> None:
    """``\\x1b`` typed as text reads as typed (its backslash doubled), unlike an escaped ESC."""
    assert shown_raw("\\x1b[31m") == "\\\\x1b[31m"
    assert shown_raw("\x1b[31m") == "\\x1b[31m"
    assert shown_raw("\\x1b") != shown_raw("\x1b")


def test_every_unprintable_code_point_is_escaped_and_printable_text_is_kept() -> None:
    """All code points (but tab and newline): the shown text is printable; each printable
    character but the backslash is kept as it was. Control: words in several scripts read as written."""
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c) not in "\t\n")
    assert shown_raw(every).isprintable()
    words = "café 東京 🙂 naïve\tend"
    assert shown_raw(words) == words
    assert shown_raw("one\ntwo") == "one\n  | two"
