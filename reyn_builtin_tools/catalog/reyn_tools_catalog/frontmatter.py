"""A small, strict front-matter parser: the YAML subset that SKILL.md and agent files need.

A file starts with a line ``---``, then ``key: value`` lines, then a line ``---``; the rest is the
body. Values may be

- plain text (``name: summarize``; a `` # comment`` after whitespace is dropped),
- a quoted string: JSON double quotes (``"a \\"b\\""``) or YAML single quotes (``'it''s'``), optionally
  followed by whitespace and a ``# comment``,
- a block scalar: ``|`` keeps line breaks, ``>`` folds them (``|-`` / ``>-`` drop the final one),
- a list: flow style ``[a, "b c"]`` or block style (``- item`` lines under the key),
- JSON: a value starting with ``{`` is a JSON object and may continue on the following lines.

Everything else YAML can do (nested mappings, anchors, tags, multi-document files) is refused with
the line number and what to write instead; the parser never guesses. No PyYAML dependency.

Parsing is linear in the size of the file: lines are scanned once (no backtracking regex, no
re-parsing of a growing JSON value), and the block, its keys, JSON nesting and the JSON values of
one value are bounded (``MAX_FRONT_MATTER_CHARS``, ``MAX_KEYS``, ``MAX_JSON_DEPTH``,
``MAX_JSON_VALUES``, counted before parsing: ``reyn_core.host.read_json``, which refuses ``NaN`` and
``Infinity``) with an error saying which limit was hit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reyn_core.host import TooManyJsonValues, read_json

MAX_FRONT_MATTER_CHARS = 1024 * 1024  # the block between the two '---' lines
MAX_KEYS = 1000
MAX_JSON_DEPTH = 64  # nested objects and lists in one JSON value
MAX_JSON_VALUES = 100_000  # JSON values in one value (parsing costs per value, not per byte)

_KEY_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_KEY_CHARS = _KEY_START | frozenset("0123456789-")
_BLOCK_INDICATORS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_UNSUPPORTED_START = ("&", "*", "!", "%", "@", "`")


def _split_key(line: str) -> tuple[str, str] | None:
    """``key: value`` → (key, value without surrounding blanks); None when the line is not one.

    A key is a letter or ``_`` then letters, digits, ``_`` and ``-``; blanks (spaces, tabs) may come
    before the colon, and at least one must separate it from a value."""
    colon = line.find(":")
    if colon <= 0:
        return None
    key = line[:colon].rstrip(" \t")
    if not key or key[0] not in _KEY_START or not _KEY_CHARS.issuperset(key):
        return None
    rest = line[colon + 1 :]
    if rest and rest[0] not in " \t":
        return None
    return key, rest.strip(" \t")


def _comment_start(text: str) -> int:
    """Where a `` # comment`` (blanks then ``#``) starts in ``text``, or -1."""
    at = text.find("#")
    while at != -1:
        if at > 0 and text[at - 1] in " \t":
            return len(text[:at].rstrip(" \t"))
        at = text.find("#", at + 1)
    return -1


def _only_comment(rest: str) -> bool:
    """Whether ``rest`` (what follows a closed value) is empty or whitespace and a ``# comment``."""
    if not rest.strip():
        return True
    blanks = len(rest) - len(rest.lstrip(" \t"))
    return blanks > 0 and rest[blanks] == "#"


def _closing_quote(raw: str) -> int:
    """The index of the quote closing the quoted scalar that starts ``raw``, or -1 when unclosed."""
    quote, i = raw[0], 1
    while i < len(raw):
        if quote == '"' and raw[i] == "\\":
            i += 2
            continue
        if raw[i] == quote:
            if quote == "'" and raw[i + 1 : i + 2] == "'":
                i += 2  # '' is a quote inside a single-quoted string
                continue
            return i
        i += 1
    return -1


class FrontMatterError(ValueError):
    """Malformed front matter. ``line`` is 1-based within the file (0 when not about one line)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.message = message
        self.line = line


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """Parsed front matter: ``values`` by key, the line of each key, and the body after the block."""

    values: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    body: str = ""


def parse_front_matter(text: str) -> FrontMatter:
    """Parse ``text`` (a whole file). Raises ``FrontMatterError`` with the line of the problem."""
    if text.startswith("\ufeff"):
        text = text[1:]
    # Lines end at "\n" only (str.splitlines would also break at U+2028, U+0085, form feeds, ...).
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].rstrip() != "---":
        raise FrontMatterError("the file must start with a front-matter block: a first line '---'", 1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "..."))
    except StopIteration:
        raise FrontMatterError(
            "the front-matter block is never closed: add a line '---' after it", len(lines)
        ) from None
    size = sum(len(line) + 1 for line in lines[1:end])
    if size > MAX_FRONT_MATTER_CHARS:
        raise FrontMatterError(
            f"the front-matter block is {size} characters; the limit is {MAX_FRONT_MATTER_CHARS} "
            "(keep long text in the body, after the closing '---')",
            1,
        )
    values, key_lines = _parse_block(lines, 1, end)
    cut = -1
    for _ in range(end + 1):  # the body starts after the closing line's "\n"
        cut = text.find("\n", cut + 1)
        if cut == -1:
            break
    return FrontMatter(values, key_lines, "" if cut == -1 else text[cut + 1 :])


def _parse_block(lines: list[str], start: int, end: int) -> tuple[dict[str, Any], dict[str, int]]:
    values: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    i = start
    while i < end:
        line, lineno = lines[i], i + 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if line[0] in " \t":
            raise FrontMatterError(
                "unexpected indentation: nested mappings are not supported; write such a value as JSON "
                'on one key (e.g. input_schema: {"type": "object"})'
                if ":" in stripped and not stripped.startswith("-")
                else "unexpected indented line: it does not continue a list or block value",
                lineno,
            )
        if stripped.startswith("- "):
            raise FrontMatterError("a list item must follow a 'key:' line", lineno)
        split = _split_key(line)
        if split is None:
            raise FrontMatterError("expected 'key: value' (keys are letters, digits, '_' and '-')", lineno)
        key, raw = split
        if raw.startswith("#"):
            raw = ""  # "key: # comment" has no value on its line (a list or nothing may follow)
        if key in values:
            raise FrontMatterError(f"key {key!r} appears twice (first on line {key_lines[key]})", lineno)
        if len(values) >= MAX_KEYS:
            raise FrontMatterError(f"more than {MAX_KEYS} keys; the limit is {MAX_KEYS}", lineno)
        key_lines[key] = lineno
        i += 1
        if raw == "":
            items, i = _indented(lines, i, end)
            values[key] = _block_list(items, key) if items else None
        elif raw in _BLOCK_INDICATORS:
            items, i = _indented(lines, i, end)
            values[key] = _block_scalar(raw, [text for _, text in items])
        elif raw.startswith("{"):
            values[key], i = _json_value(lines, i - 1, end, raw, key)
        else:
            values[key] = _scalar_or_flow(raw, lineno, key)
    return values, key_lines


def _indented(lines: list[str], i: int, end: int) -> tuple[list[tuple[int, str]], int]:
    """The indented (or blank) lines that follow a key, as (line number, text)."""
    items: list[tuple[int, str]] = []
    while i < end and (not lines[i].strip() or lines[i][0] in " \t" or lines[i].lstrip().startswith("- ")):
        if lines[i].startswith("\t"):
            raise FrontMatterError("tabs are not allowed for indentation; use spaces", i + 1)
        items.append((i + 1, lines[i]))
        i += 1
    while items and not items[-1][1].strip():
        items.pop()
    return items, i


def _block_list(items: list[tuple[int, str]], key: str) -> list[Any]:
    out: list[Any] = []
    for lineno, text in items:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped == "-" or not stripped.startswith("- "):
            if ":" in stripped:
                raise FrontMatterError(
                    f"{key!r} holds a nested mapping, which is not supported; write its value as JSON", lineno
                )
            raise FrontMatterError(f"expected a list item '- value' under {key!r}", lineno)
        item = stripped[2:].strip()
        if item.startswith("{") or item.startswith("["):
            out.append(_loads(item, lineno, "JSON list item"))
            continue
        out.append(_scalar(item, lineno))
    return out


def _block_scalar(indicator: str, texts: list[str]) -> str:
    widths = [len(t) - len(t.lstrip(" ")) for t in texts if t.strip()]
    indent = min(widths) if widths else 0
    body = [t[indent:] if t.strip() else "" for t in texts]
    if indicator.startswith(">"):
        paragraphs: list[str] = []
        current: list[str] = []
        for t in body:
            if t:
                current.append(t.strip())
            else:
                paragraphs.append(" ".join(current))
                current = []
        paragraphs.append(" ".join(current))
        value = "\n".join(paragraphs)
    else:
        value = "\n".join(body)
    return value if indicator.endswith("-") else value + "\n"


def _nesting(text: str, depth: int, in_string: bool) -> tuple[int, int, bool, int]:
    """Scan ``text`` for JSON brackets outside strings, starting at ``depth`` (inside a string when
    ``in_string``). Returns (depth after, deepest, still inside a string, index where the depth
    first went back to 0, or -1)."""
    deepest = depth
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return depth, deepest, in_string, i
        i += 1
    return depth, deepest, in_string, -1


def _too_deep(what: str, lineno: int) -> FrontMatterError:
    return FrontMatterError(
        f"the {what} nests more than {MAX_JSON_DEPTH} levels deep; the limit is {MAX_JSON_DEPTH}", lineno
    )


def _loads(text: str, lineno: int, what: str) -> Any:
    """``read_json`` of one value, with its nesting and values bounded and every failure a
    ``FrontMatterError``."""
    if _nesting(text, 0, False)[1] > MAX_JSON_DEPTH:
        raise _too_deep(what, lineno)
    try:
        return read_json(text, MAX_JSON_VALUES)
    except json.JSONDecodeError as exc:
        raise FrontMatterError(f"malformed {what} ({exc.msg})", lineno) from None
    except (ValueError, RecursionError) as exc:  # too many values, NaN, an integer over the digit limit
        raise FrontMatterError(f"the {what} cannot be read ({exc})", lineno) from None


def _json_value(lines: list[str], i: int, end: int, raw: str, key: str) -> tuple[Any, int]:
    """A JSON object starting on line ``i`` (0-based) and possibly continuing on the next lines.

    The lines are scanned once for the bracket that closes the object; only then is the text parsed,
    once (re-parsing the growing text after every line was quadratic)."""
    parts = [raw]
    depth, deepest, in_string, closed = _nesting(raw, 0, False)
    j = i + 1
    while closed == -1 and j < end:
        parts.append(lines[j])
        depth, line_deepest, in_string, closed = _nesting(lines[j], depth, in_string)
        deepest = max(deepest, line_deepest)
        j += 1
    if deepest > MAX_JSON_DEPTH:
        raise _too_deep(f"JSON value of {key!r}", i + 1)
    try:
        return read_json("\n".join(parts), MAX_JSON_VALUES), j
    except json.JSONDecodeError as exc:
        raise FrontMatterError(
            f"the JSON value of {key!r} is malformed or not closed ({exc.msg})", i + 1
        ) from None
    except (ValueError, RecursionError) as exc:
        raise FrontMatterError(f"the JSON value of {key!r} cannot be read ({exc})", i + 1) from None


def _strip_flow_comment(raw: str) -> str:
    """``raw`` without a `` # comment`` after the ``]`` that closes its flow list."""
    quote = ""
    for i, ch in enumerate(raw):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "]":
            return raw[: i + 1] if raw[i + 1 :].strip() and _only_comment(raw[i + 1 :]) else raw
    return raw


def _scalar_or_flow(raw: str, lineno: int, key: str) -> Any:
    if raw.startswith("["):
        for candidate in (raw, _strip_flow_comment(raw)):
            if _nesting(candidate, 0, False)[1] > MAX_JSON_DEPTH:
                raise _too_deep(f"list value of {key!r}", lineno)
            try:
                return read_json(candidate, MAX_JSON_VALUES)
            except TooManyJsonValues as exc:  # JSON, but too large: not read again as a YAML list
                raise FrontMatterError(f"the list value of {key!r} cannot be read ({exc})", lineno) from None
            except (ValueError, RecursionError):  # not JSON: a YAML flow list such as [a, "b c"]
                pass
        raw = _strip_flow_comment(raw)
        if not raw.endswith("]"):
            raise FrontMatterError(f"the list value of {key!r} is not closed by ']'", lineno)
        inner = raw[1:-1].strip()
        return [] if not inner else [_scalar(part.strip(), lineno) for part in _split_flow(inner, lineno)]
    return _scalar(raw, lineno)


def _split_flow(inner: str, lineno: int) -> list[str]:
    parts: list[str] = []
    quote, start = "", 0
    for i, ch in enumerate(inner):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            parts.append(inner[start:i])
            start = i + 1
        elif ch in "[]{}":
            raise FrontMatterError(
                "nested lists or mappings inside a flow list are not supported; use JSON", lineno
            )
    if quote:
        raise FrontMatterError("unterminated quoted string in a list", lineno)
    parts.append(inner[start:])
    if any(not p.strip() for p in parts):
        raise FrontMatterError("empty item in a flow list", lineno)
    return parts


def _scalar(raw: str, lineno: int) -> str:
    if raw.startswith('"'):
        end = _closing_quote(raw)
        if end > 0 and not _only_comment(raw[end + 1 :]):
            raise FrontMatterError(
                "malformed double-quoted string (only whitespace and a '# comment' may follow the "
                "closing quote)",
                lineno,
            )
        value = _loads(raw[: end + 1] if end > 0 else raw, lineno, "double-quoted string")
        if not isinstance(value, str):
            raise FrontMatterError("a quoted value must be one string", lineno)
        return value
    if raw.startswith("'"):
        end = _closing_quote(raw)
        if end < 0 or not _only_comment(raw[end + 1 :]):
            raise FrontMatterError("malformed single-quoted string (write a quote inside as '')", lineno)
        return raw[1:end].replace("''", "'")
    if raw.startswith(_UNSUPPORTED_START):
        raise FrontMatterError(
            f"YAML anchors, aliases, tags and directives ({raw[0]!r}) are not supported; quote the value",
            lineno,
        )
    if raw.startswith(("{", "[")):
        raise FrontMatterError("a mapping or list cannot appear here; write it as JSON on its key", lineno)
    comment = _comment_start(raw)
    value = raw[:comment].rstrip() if comment != -1 else raw
    if ": " in value:
        raise FrontMatterError("a plain value may not contain ': '; quote it", lineno)
    return value
