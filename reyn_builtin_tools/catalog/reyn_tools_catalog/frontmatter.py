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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_BLOCK_RE = re.compile(r"^[|>][-+]?$")
_UNSUPPORTED_START = ("&", "*", "!", "%", "@", "`")
_COMMENT_RE = re.compile(r"[ \t]+#")


def _only_comment(rest: str) -> bool:
    """Whether ``rest`` (what follows a closed value) is empty or whitespace and a ``# comment``."""
    return not rest.strip() or _COMMENT_RE.match(rest) is not None


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
    values, key_lines = _parse_block(lines, 1, end)
    body_lines = re.split(r"(?<=\n)", text)[end + 1 :]
    return FrontMatter(values, key_lines, "".join(body_lines))


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
        m = _KEY_RE.match(line)
        if m is None:
            raise FrontMatterError("expected 'key: value' (keys are letters, digits, '_' and '-')", lineno)
        key, raw = m.group(1), m.group(2) or ""
        if raw.startswith("#"):
            raw = ""  # "key: # comment" has no value on its line (a list or nothing may follow)
        if key in values:
            raise FrontMatterError(f"key {key!r} appears twice (first on line {key_lines[key]})", lineno)
        key_lines[key] = lineno
        i += 1
        if raw == "":
            items, i = _indented(lines, i, end)
            values[key] = _block_list(items, key) if items else None
        elif _BLOCK_RE.match(raw):
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
            try:
                out.append(json.loads(item))
            except json.JSONDecodeError as exc:
                raise FrontMatterError(f"malformed JSON list item ({exc.msg})", lineno) from None
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


def _json_value(lines: list[str], i: int, end: int, raw: str, key: str) -> tuple[Any, int]:
    """A JSON object starting on line ``i`` (0-based) and possibly continuing on the next lines."""
    text = raw
    j = i + 1
    while True:
        try:
            return json.loads(text), j
        except json.JSONDecodeError as exc:
            if j >= end:
                raise FrontMatterError(
                    f"the JSON value of {key!r} is malformed or not closed ({exc.msg})", i + 1
                ) from None
        text += "\n" + lines[j]
        j += 1


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
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            pass
        raw = _strip_flow_comment(raw)
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            pass
        if not raw.endswith("]"):
            raise FrontMatterError(f"the list value of {key!r} is not closed by ']'", lineno)
        inner = raw[1:-1].strip()
        return [] if not inner else [_scalar(part.strip(), lineno) for part in _split_flow(inner, lineno)]
    return _scalar(raw, lineno)


def _split_flow(inner: str, lineno: int) -> list[str]:
    parts, current, quote = [], "", ""
    for ch in inner:
        if quote:
            current += ch
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            current += ch
        elif ch == ",":
            parts.append(current)
            current = ""
        elif ch in "[]{}":
            raise FrontMatterError(
                "nested lists or mappings inside a flow list are not supported; use JSON", lineno
            )
        else:
            current += ch
    if quote:
        raise FrontMatterError("unterminated quoted string in a list", lineno)
    parts.append(current)
    if any(not p.strip() for p in parts):
        raise FrontMatterError("empty item in a flow list", lineno)
    return parts


def _scalar(raw: str, lineno: int) -> str:
    if raw.startswith('"'):
        end = _closing_quote(raw)
        if end > 0 and not _only_comment(raw[end + 1 :]):
            raise FrontMatterError(
                "malformed double-quoted string (only whitespace and a '# comment' may follow the closing quote)",
                lineno,
            )
        try:
            value = json.loads(raw[: end + 1] if end > 0 else raw)
        except json.JSONDecodeError as exc:
            raise FrontMatterError(f"malformed double-quoted string ({exc.msg})", lineno) from None
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
    comment = _COMMENT_RE.search(raw)
    value = raw[: comment.start()].rstrip() if comment else raw
    if ": " in value:
        raise FrontMatterError("a plain value may not contain ': '; quote it", lineno)
    return value
