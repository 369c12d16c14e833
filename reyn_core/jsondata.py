"""JSON data, one way each: the canonical form (hashes, cache keys), the compact wire form (what a
model is sent), conversion of handler results to JSON data, the nesting bound, and the value count
that bounds what a JSON text from a peer may cost to parse (``json_values``, ``JsonValueCount``), and
the project's only JSON readers (``parse_json``, ``read_json``, ``parse_own_json``)."""

from __future__ import annotations

import codecs
import dataclasses
import enum
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import PurePath
from typing import Any, NoReturn

from .errors import NotJsonNumber, NotUtf8Json, TooManyJsonValues


def canonical_json(value: Any) -> str:
    """The one canonical JSON text of ``value``: keys sorted, no spaces, non-ASCII kept. Hash it with
    ``.encode("utf-8", "surrogatepass")`` so a lone surrogate from a model hashes like anything else."""
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Compact JSON in the value's own key order (the wire form of renders and tool results: key order
    is the author's, so renders stay byte-stable and readable)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)`` for a JSON text from outside (a model's arguments or reply, a peer's
    frame, a file a person wrote), with the numbers JSON has only: ``NaN``, ``Infinity``,
    ``-Infinity`` and a literal beyond a float's range (``1e400``) raise ``NotJsonNumber`` (a
    ``ValueError``) as they are parsed, so no float that no JSON can carry onward comes in. Its other
    errors are ``json.loads``'s. The first-party code reads JSON through this module only (ruff's
    TID251 bans ``json.loads`` and ``json.load`` elsewhere): a peer's text of unbounded size through
    ``read_json``, which bounds its values first."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)


def read_json(text: str | bytes, max_values: int) -> Any:
    """``parse_json`` of a peer's text once ``values_within(text, max_values)``: a text of more JSON
    values raises ``TooManyJsonValues`` unparsed (parsing costs per value, not per byte), bytes that
    are not UTF-8 JSON ``NotUtf8Json`` (``check_utf8_head``), both ``ValueError``s. Bytes are then
    read as UTF-8, as the count read them. Nesting deeper than Python's parser goes is its
    ``RecursionError``, as ``json.loads``'s."""
    if not values_within(text, max_values):
        raise TooManyJsonValues(max_values)
    return parse_json(text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text)


def parse_own_json(text: str | bytes) -> Any:
    """``json.loads(text)`` exactly, ``NaN`` and ``Infinity`` included, for JSON text Reyn wrote
    itself with ``json.dumps`` (a store's column, a snapshot, a saved state, a cache key): what it
    wrote it reads back unchanged. Never for text from outside — ``parse_json`` or ``read_json``."""
    return json.loads(text)


def _refuse_constant(name: str) -> NoReturn:
    raise NotJsonNumber(name)


def _finite_float(literal: str) -> float:
    # called for a literal with a fraction or an exponent only (an integer is never a float)
    value = float(literal)
    if not math.isfinite(value):
        raise NotJsonNumber(literal)
    return value


def to_jsonable(value: Any) -> Any:
    """Turn a handler's result into JSON-safe data (pydantic models, dataclasses, paths, sets…)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    model_dump = getattr(value, "model_dump", None)  # pydantic models, without importing pydantic
    if model_dump is not None and not isinstance(value, type):
        return model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v) for v in items]
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def fields_json(
    record: Any, *, rename: Mapping[str, str] | None = None, omit: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A dataclass record's JSON form, one way for every record: its fields in declaration order (but
    ``omit``), each as JSON data (``to_jsonable``: a tuple is a list), under its ``rename``d key."""
    keys = rename or {}
    return {
        keys.get(f.name, f.name): to_jsonable(getattr(record, f.name))
        for f in dataclasses.fields(record)
        if f.name not in omit
    }


# The Python types of JSON's scalars, exactly (not subclasses): data of only these nests nothing.
JSON_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def depth_within(value: Any, limit: int) -> bool:
    """Whether ``value`` nests at most ``limit`` containers (mappings and lists) deep, the outermost
    counting as 1 and a scalar as 0. Iterative and bounded, so deep or cyclic data cannot overflow."""
    kind = type(value)
    if (
        kind is not dict
        and kind is not list
        and (kind in JSON_SCALAR_TYPES or not isinstance(value, Mapping | list))
    ):
        return True
    if limit >= 1:  # the common case, a flat object of scalars (every call's arguments), without a stack
        for child in value.values() if kind is dict or isinstance(value, Mapping) else value:
            if type(child) not in JSON_SCALAR_TYPES:
                break
        else:
            return True
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        kind = type(node)
        children = (
            node if kind is list else node.values() if kind is dict or isinstance(node, Mapping) else node
        )
        for c in children:
            kind = type(c)
            # exact types first: an ABC check on every scalar would cost more than the walk
            if (
                kind is dict
                or kind is list
                or (kind not in JSON_SCALAR_TYPES and isinstance(c, Mapping | list))
            ):
                stack.append((c, depth + 1))
    return True


# A JSON string literal once its escapes are gone (``_without_escapes``): from its opening quote to
# its closing one, or to a line end or the text's end, so a match never fails and no text is scanned
# twice. The group is the closing quote, if any. A JSON string holds no raw CR or LF (a parser refuses
# it and stops there), so a line end always ends one.
_STRING = re.compile(rb'"[^"\r\n]*+("?)')
_SLICE = 64 * 1024  # a long text is counted a slice at a time: what the count holds stays small
_HEAD = 4  # how many of a text's first bytes ``json.detect_encoding`` reads
# No UTF-8 JSON text holds a NUL byte (a control character is escaped in a string and is no token
# outside one) or an FE or FF byte (UTF-8 has none). Every text ``json.detect_encoding`` reads as
# UTF-16 or UTF-32 holds one in its first four bytes (a byte order mark, or a NUL in the first two);
# this needs neither the text's length nor more than each byte as it comes.
_NOT_UTF8 = re.compile(rb"[\x00\xfe\xff]")
_TEXT_HEAD = b" " * _HEAD  # the head of text given as ``str``: no parser of a ``str`` detects anything


def _marks(text: bytes) -> int:
    # outside strings, a value is the text's first or follows one of these
    return text.count(b",") + text.count(b":") + text.count(b"[") + text.count(b"{")


def check_utf8_head(head: bytes) -> None:
    """``NotUtf8Json`` unless ``head``, a JSON text's first four bytes (the whole text if shorter),
    can begin UTF-8 JSON without a byte order mark. ``json.loads`` of bytes detects UTF-16 and UTF-32 from
    them, where a count of the bytes as UTF-8 is wrong (an escaped quote is ``5C 00 22 00``); refused
    here, no parser of the bytes can read them other than as the count did."""
    if head.startswith(codecs.BOM_UTF8):
        raise NotUtf8Json("JSON in UTF-8 with a byte order mark")
    if _NOT_UTF8.search(head, 0, _HEAD) is not None:
        detected = json.detect_encoding(head[:_HEAD])
        if detected.startswith("utf-8"):
            raise NotUtf8Json("not UTF-8 JSON (its first 4 bytes hold a NUL, FE or FF byte)")
        raise NotUtf8Json(f"JSON in {detected.upper()}")


def json_values(text: bytes | str) -> int:
    """How many JSON values ``text`` holds — every scalar, container and object key counts one, an
    empty container two — counted *before* it is parsed, so a peer's message can be bounded by what
    parsing it costs (per value, not per byte). Linear in the size, at C speed, holding a slice at a
    time: string literals are skipped by one regex pass, then ``,`` ``:`` ``[`` ``{`` are counted (a
    comma inside a string counts nothing). For text that is not JSON it is the same marks outside
    strings, or the number of string literals if that is more (in JSON every string but the first
    follows a mark, so it never is): a parser stops at its first error, and what it parsed before is
    counted; and text of many adjacent strings cannot make the count skip strings without end.
    Bytes are counted only as UTF-8 JSON: others (UTF-16, UTF-32, a byte order mark) raise
    ``NotUtf8Json`` (``check_utf8_head``), so the count never disagrees with a parser's reading."""
    count, data = _count_of(text)
    total = 1
    for start in range(0, len(data), _SLICE):
        total = count.add(data[start : start + _SLICE])
    return total


def values_within(text: bytes | str, limit: int) -> bool:
    """Whether ``text`` holds at most ``limit`` JSON values (``json_values``); the bound beside
    ``depth_within``, checked before a peer's text is parsed. Text whose marks are within the limit
    even counted inside strings is within it at once (a plain ``bytes.count``); otherwise the count
    skips strings and stops at the first slice over the limit — so it skips at most about ``limit``
    strings, whatever the text's size. Bytes that are not UTF-8 JSON raise ``NotUtf8Json``."""
    count, data = _count_of(text)
    if _marks(data) + 1 <= limit:
        return True
    for start in range(0, len(data), _SLICE):
        if count.add(data[start : start + _SLICE]) > limit:
            return False
    return True


def _count_of(text: bytes | str) -> tuple[JsonValueCount, bytes]:
    """A count for ``text`` and the bytes to give it: a ``str`` encoded (its head needs no check),
    bytes as they are, their head checked at once."""
    count = JsonValueCount()
    if isinstance(text, str):
        count._head = _TEXT_HEAD
        return count, text.encode("utf-8", "surrogatepass")
    check_utf8_head(text[:_HEAD])
    count._head = _TEXT_HEAD
    return count, text


class JsonValueCount:
    """``json_values`` of a stream read in chunks: ``add`` counts a chunk with the string state
    carried from the previous one (a string, or an escape, cut by a chunk boundary); nothing else is
    held. A line end (CR or LF) closes any string, so in a stream of lines (Server-Sent Events) a
    quote on one line (an ``id:`` field, a comment) cannot hide the marks of the next. Each message
    must be UTF-8 JSON: ``add`` raises ``NotUtf8Json`` once its first four bytes show it is not
    (``check_utf8_head``; what came before them is at most three bytes, a message of them at most
    four values whatever a parser reads)."""

    def __init__(self) -> None:
        self.values = 0
        """The marks counted since the last ``restart`` (a JSON message holds one value more)."""
        self.strings = 0
        """The string literals skipped since the last ``restart``."""
        self._carry = b""  # inside a string: b'"'; after an odd run of backslashes in it: b'"\\'
        self._head = b""  # the message's first bytes, until ``_HEAD`` of them are checked

    def add(self, chunk: bytes) -> int:
        """Count ``chunk``; the values of the message in progress so far (``json_values``).
        ``NotUtf8Json`` if the message's first bytes are not UTF-8 JSON's."""
        if len(self._head) < _HEAD:
            self._head += chunk[: _HEAD - len(self._head)]
            if len(self._head) == _HEAD:
                check_utf8_head(self._head)
        if not self._carry and b'"' not in chunk:
            self.values += _marks(chunk)
        else:
            data = _without_escapes(self._carry + chunk if self._carry else chunk)
            outside, strings = _STRING.subn(b"", data)
            self.values += _marks(outside)
            # a string carried in was counted when it opened
            self.strings += strings - (1 if self._carry else 0)
            self._carry = _open_string(data)
        return max(self.values + 1, self.strings)

    def restart(self) -> None:
        """A new message starts (outside any string)."""
        self.values, self.strings, self._carry, self._head = 0, 0, b"", b""


def _without_escapes(data: bytes) -> bytes:
    """``data`` with each escaped backslash and escaped quote removed, two C passes: pairs of a
    backslash run go from its left, as a parser pairs them, so what is left of a run is at most one
    backslash, escaping what follows it. No quote left is escaped; a string runs to the next one.
    (Outside strings a backslash is not JSON: a parser stops there.)"""
    return data.replace(b"\\\\", b"").replace(b'\\"', b"")


def _open_string(data: bytes) -> bytes:
    """The string state at the end of ``data`` (escapes removed): ``b""`` outside a string, ``b'"'``
    inside one, ``b'"\\'`` inside one after an escaping backslash. Only the last line matters: on it
    a string ends at its quote or runs to the end, and the last match says which."""
    last_line = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
    if data.find(b'"', last_line) < 0 or _STRING.findall(data, last_line)[-1]:
        return b""
    return b'"\\' if data.endswith(b"\\") else b'"'


def follow_pointer(root: Any, pointer: str) -> tuple[bool, Any]:
    """``(True, value)`` for the value JSON pointer ``pointer`` (RFC 6901: ``""`` is ``root``,
    ``/a/0/b~1c`` steps into ``root["a"][0]["b/c"]``) names inside ``root``; ``(False, None)`` when it
    names nothing there (a missing key, an index out of range, a step into a scalar)."""
    if not pointer:
        return True, root
    if not pointer.startswith("/"):
        return False, None
    node: Any = root
    for raw in pointer[1:].split("/"):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return False, None
    return True, node
