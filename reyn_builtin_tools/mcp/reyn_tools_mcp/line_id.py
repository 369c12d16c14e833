"""The top-level ``"id"`` of a JSON-RPC request from its line's first bytes, for answering a line
that is refused unread (``serve_stdio``): SDK clients write ``jsonrpc``, ``id`` and ``method``
first. One linear pass over at most ``lines.HEAD`` bytes that tracks strings, their escapes and the
nesting depth, so an ``"id"`` inside ``params`` or inside a string is never taken; the id's own
token (one string or number, of at most ``lines.HEAD`` bytes) is read by ``parse_json``.
"""

from __future__ import annotations

from reyn_core.host import parse_json

_NUMBER = frozenset(b"0123456789-+.eE")


def _string_end(data: bytes, start: int) -> int:
    """The index after the string opening at ``start`` (its escapes skipped); -1 if it is cut off."""
    i = start + 1
    while i < len(data):
        if data[i] == 0x5C:  # backslash: the next byte is escaped
            i += 2
        elif data[i] == 0x22:
            return i + 1
        else:
            i += 1
    return -1


def _value(data: bytes, start: int) -> int | str | None:
    """The id value at ``start`` if it is a whole string or integer within ``data``; else None."""
    while start < len(data) and data[start] in b" \t\r\n":
        start += 1
    if start < len(data) and data[start] == 0x22:
        end = _string_end(data, start)
    else:
        end = start
        while end < len(data) and data[end] in _NUMBER:
            end += 1
        if end == len(data):  # maybe cut off
            return None
    if end <= start:
        return None
    try:
        value = parse_json(data[start:end])
    except ValueError:
        return None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def request_id(head: bytes) -> int | str | None:
    """The request's top-level ``"id"`` (a string or an integer) if ``head`` — the first bytes of a
    JSON object — holds it whole; None otherwise."""
    depth, i, key_next, key = 0, 0, False, b""
    while i < len(head):
        byte = head[i]
        if byte == 0x22:
            end = _string_end(head, i)
            if end < 0:
                return None
            if depth == 1 and key_next:
                key, key_next = head[i:end], False
            i = end
            continue
        if byte in b"{[":
            if depth == 0 and byte != 0x7B:
                return None  # not an object (a batch, or not JSON-RPC)
            depth += 1
            key_next = depth == 1
        elif byte in b"}]":
            depth -= 1
            if depth <= 0:
                return None
        elif byte == 0x2C and depth == 1:
            key_next, key = True, b""
        elif byte == 0x3A and depth == 1 and key == b'"id"':
            return _value(head, i + 1)
        elif depth == 0 and byte not in b" \t\r\n":
            return None
        i += 1
    return None


__all__ = ["request_id"]
