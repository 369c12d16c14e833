"""Glob patterns over relative paths: ``*`` and ``?`` stay inside one component, ``**`` crosses them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reyn_core import ArgumentProblem, InvalidToolArguments

_MAGIC = frozenset("*?[")


def _translate(pattern: str) -> str:
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
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("/", "")
                out.append(f"[{'^/' if negate else ''}{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled glob. ``prefix`` is its leading literal directories (walked directly), ``depth`` the
    number of components it can match (None with ``**``), ``basename`` whether it has no ``/`` and
    so matches a file name at any depth (the ``grep_files`` filter style)."""

    text: str
    regex: re.Pattern[str]
    prefix: tuple[str, ...]
    depth: int | None
    basename: bool

    def matches(self, rel_parts: tuple[str, ...]) -> bool:
        """Whether a path (components relative to the search directory) matches."""
        if self.basename:
            return self.regex.fullmatch(rel_parts[-1]) is not None
        return self.regex.fullmatch("/".join(rel_parts)) is not None


def compile_glob(pattern: str, *, field: str, basename_if_plain: bool = False) -> Glob:
    """Compile ``pattern``; ``..`` segments and absolute patterns are invalid arguments."""

    def invalid(msg: str) -> InvalidToolArguments:
        return InvalidToolArguments(
            f"invalid glob {pattern[:100]!r}: {msg}", problems=[ArgumentProblem(f"/{field}", msg)]
        )

    if not pattern or "\x00" in pattern:
        raise invalid("a glob must be a non-empty string without NUL bytes")
    if pattern.startswith("/"):
        raise invalid("a glob is relative to the search directory; pass the directory as `path`")
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise invalid("a glob may not contain '..' segments")
    if not parts:
        raise invalid("the glob names no files")
    cleaned = "/".join(parts)
    basename = basename_if_plain and len(parts) == 1
    prefix: list[str] = []
    for part in parts[:-1]:
        if _MAGIC & set(part):
            break
        prefix.append(part)
    depth = None if "**" in cleaned else len(parts)
    try:
        regex = re.compile(_translate(cleaned), re.DOTALL)
    except re.error as exc:
        raise invalid(str(exc)) from None
    return Glob(cleaned, regex, () if basename else tuple(prefix), depth, basename)
