"""Schema patterns on RE2: linear-time matching, no backreferences or lookaround; a pattern RE2 cannot
run (or too long) is refused with ``UnusablePattern`` naming the construct. ``re2`` is imported on first
use."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

MAX_PATTERN_LENGTH = 1000

_RE2_CONSTRUCTS = (
    ("(?<=", "a lookbehind '(?<=...)'"),
    ("(?<!", "a negative lookbehind '(?<!...)'"),
    ("(?=", "a lookahead '(?=...)'"),
    ("(?!", "a negative lookahead '(?!...)'"),
    ("(?P=", "a named backreference '(?P=name)'"),
    ("(?>", "an atomic group '(?>...)'"),
    ("\\k", "a named backreference '\\k<name>'"),
    ("++", "a possessive quantifier '++'"),
    ("*+", "a possessive quantifier '*+'"),
    ("?+", "a possessive quantifier '?+'"),
)


class UnusablePattern(ValueError):
    """A schema pattern Reyn will not run: too long, or not expressible in RE2."""

    def __init__(self, pattern: str, reason: str) -> None:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        super().__init__(f"pattern {shown!r} {reason}")
        self.pattern = pattern
        self.reason = reason


def _ecma_escapes(pattern: str) -> str:
    r"""ECMA-262's ``\uXXXX`` escape as RE2's ``\x{XXXX}`` (an escaped backslash is left alone)."""
    if "\\u" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            hexdigits = pattern[i + 2 : i + 6]
            if (
                pattern[i + 1] == "u"
                and len(hexdigits) == 4
                and all(c in "0123456789abcdefABCDEF" for c in hexdigits)
            ):
                out.append("\\x{" + hexdigits + "}")
                i += 6
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    r"""``pattern`` compiled by RE2 (linear-time matching), or ``UnusablePattern`` saying why not.

    RE2 has no backreferences, lookaround, atomic groups or possessive quantifiers: a pattern using
    one is refused, naming the construct. ECMA-262's ``\uXXXX`` escape is accepted.
    """
    if not isinstance(pattern, str):
        raise UnusablePattern(repr(pattern), "is not a string")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise UnusablePattern(pattern, f"is {len(pattern)} characters; the limit is {MAX_PATTERN_LENGTH}")
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(_ecma_escapes(pattern), options)
    except re2.error as exc:
        detail = (
            exc.args[0].decode("utf-8", "replace")
            if exc.args and isinstance(exc.args[0], bytes)
            else str(exc)
        )
        construct = _construct_in(pattern, detail)
        if construct:
            raise UnusablePattern(
                pattern,
                f"uses {construct}, which RE2 cannot run (Reyn runs schema patterns on RE2, a "
                f"linear-time engine without backreferences or lookaround; RE2 says: {detail})",
            ) from None
        raise UnusablePattern(pattern, f"is not a regular expression RE2 accepts: {detail}") from None


def _construct_in(pattern: str, detail: str) -> str:
    for token, name in _RE2_CONSTRUCTS:
        if token in pattern and token[:3] in detail:
            return name
    if "invalid escape sequence: \\" in detail:
        escape = detail.rsplit(": ", 1)[-1]
        if escape[1:2].isdigit():
            return f"a backreference '{escape}'"
    return ""
