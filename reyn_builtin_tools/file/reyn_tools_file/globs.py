"""Glob patterns over relative paths: ``*`` and ``?`` stay inside one component, ``**`` crosses them.

A glob is translated to a regular expression and matched by RE2 (``patterns``), an automaton: the
time to match is linear in the path whatever the glob (a backtracking translation of ``*`` took
minutes for a long name and a dozen stars).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .patterns import MAX_PATTERN_CHARS, compile_translated, invalid

_MAGIC = frozenset("*?[")


def _char(c: str) -> str:
    """``c`` as an RE2 literal (inside or outside a class): a code-point escape, never syntax."""
    return f"\\x{{{ord(c):x}}}"


def _class(pattern: str, i: int, field: str) -> tuple[str, int] | None:
    """The class ``[...]`` starting at ``pattern[i]`` as RE2 syntax and the index of its ``]``, or
    None when it is never closed (the ``[`` is then a literal). ``!`` or ``^`` first negates; a ``]``
    first is a member; ``a-z`` is a range. A class never matches ``/``."""
    j = i + 1
    negate = pattern[j : j + 1] in ("!", "^")
    if negate:
        j += 1
    end = pattern.find("]", j + 1 if pattern[j : j + 1] == "]" else j)
    if end == -1:
        return None
    body = pattern[j:end]
    items: list[str] = []
    k = 0
    while k < len(body):
        lo = hi = body[k]
        if k + 2 < len(body) and body[k + 1] == "-":
            hi = body[k + 2]
            if lo > hi:
                raise invalid(
                    field, f"invalid glob {pattern[:100]!r}: the range {lo}-{hi} in [{body}] is reversed"
                )
            k += 3
        else:
            k += 1
        items.extend(_range_without_slash(lo, hi))
    members = "".join(items)
    if negate:
        return f"[^/{members}]", end
    return (f"[{members}]" if members else "[^\\x{0}-\\x{10ffff}]"), end


def _range_without_slash(lo: str, hi: str) -> list[str]:
    """The range ``lo``-``hi`` as class members, ``/`` left out (a class matches within one name)."""
    if lo <= "/" <= hi:
        parts: list[str] = []
        if lo < "/":
            parts += _range_without_slash(lo, ".")
        if hi > "/":
            parts += _range_without_slash("0", hi)
        return parts
    return [_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}"]


def _translate(pattern: str, field: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (found := _class(pattern, i, field)) is not None:
            regex, i = found
            out.append(regex)
        else:
            out.append(_char(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled glob. ``prefix`` is its leading literal directories (walked directly), ``depth`` the
    number of components it can match (None with ``**``), ``basename`` whether it has no ``/`` and
    so matches a file name at any depth (the ``grep_files`` filter style)."""

    text: str
    regex: Any  # an RE2 pattern: linear-time matching
    prefix: tuple[str, ...]
    depth: int | None
    basename: bool

    def matches(self, rel_parts: tuple[str, ...]) -> bool:
        """Whether a path (components relative to the search directory) matches."""
        if self.basename:
            return self.regex.fullmatch(rel_parts[-1]) is not None
        return self.regex.fullmatch("/".join(rel_parts)) is not None


def compile_glob(pattern: str, *, field: str, basename_if_plain: bool = False) -> Glob:
    """Compile ``pattern``; ``..`` segments, absolute and over-long patterns are invalid arguments."""

    def refuse(msg: str) -> Exception:
        return invalid(field, f"invalid glob {pattern[:100]!r}: {msg}")

    if not pattern or "\x00" in pattern:
        raise refuse("a glob must be a non-empty string without NUL bytes")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise refuse(f"the glob is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS}")
    if not pattern.isascii():
        try:
            pattern.encode("utf-8")
        except UnicodeEncodeError:
            raise refuse("the glob is not valid UTF-8 text (it contains lone surrogates)") from None
    if pattern.startswith("/"):
        raise refuse("a glob is relative to the search directory; pass the directory as `path`")
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise refuse("a glob may not contain '..' segments")
    if not parts:
        raise refuse("the glob names no files")
    cleaned = "/".join(parts)
    basename = basename_if_plain and len(parts) == 1
    prefix: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        prefix.append(part)
    depth = None if "**" in cleaned else len(parts)
    regex = compile_translated(_translate(cleaned, field))
    return Glob(cleaned, regex, () if basename else tuple(prefix), depth, basename)
