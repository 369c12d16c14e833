"""The value count reads bytes only as UTF-8 JSON (issue 24, task E; RFC 8259: JSON between systems is
UTF-8). ``json.loads`` of bytes *detects* UTF-16 and UTF-32 (``json.detect_encoding``), where a count of
the bytes as UTF-8 is wrong — an escaped quote is ``5C 00 22 00``, so a string never closes and the
rest is hidden. So ``json_values``, ``values_within`` and ``JsonValueCount`` refuse any bytes a parser
would not read as UTF-8 (``NotUtf8Json``, naming what they are) before counting anything: no parser
of the bytes can read other values than were counted. Text given as ``str`` is never refused (no
parser of a ``str`` detects an encoding)."""

from __future__ import annotations

import codecs
import itertools
import json

import pytest

from reyn_core.host import JsonValueCount, NotUtf8Json, check_utf8_head, json_values, values_within

# The reviewer's body: one escaped quote, then many empty lists.
FLOOD = (
    '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"s":"\\"","x":['
    + "[]," * 2000
    + "[]]}}}"
)
DETECTED = ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]


def _stream(data: bytes, size: int) -> int:
    count, total = JsonValueCount(), 1
    for start in range(0, len(data), size):
        total = count.add(data[start : start + size])
    return total


@pytest.mark.parametrize("encoding", DETECTED)
def test_json_a_parser_reads_as_utf_16_or_32_is_refused_by_every_count(encoding: str) -> None:
    data = FLOOD.encode(encoding)
    assert len(str(json.loads(data))) > 4000  # what a parser of the bytes reads: the whole flood
    name = json.detect_encoding(data).upper()
    for count in (
        json_values,
        lambda d: values_within(d, 1000),
        lambda d: _stream(d, 1),
        lambda d: _stream(d, 7),
    ):
        with pytest.raises(NotUtf8Json, match=f"JSON in {name}; only UTF-8 JSON"):
            count(data)


def test_a_utf8_byte_order_mark_is_refused_and_its_text_without_one_counted() -> None:
    """RFC 8259: senders add no byte order mark; a parser may ignore one or refuse it. Reyn refuses it
    in the count, so every parser after it (the SDK's ``json.loads``, pydantic, Reyn's own) reads the
    same text; the same text without it is the positive control."""
    with pytest.raises(NotUtf8Json, match="JSON in UTF-8 with a byte order mark"):
        values_within(codecs.BOM_UTF8 + b"[1]", 1000)
    with pytest.raises(NotUtf8Json, match="byte order mark"):
        _stream(codecs.BOM_UTF8 + b"[1]", 1)
    assert json_values(b"[1]") == _stream(b"[1]", 1) == 2
    assert values_within(FLOOD.encode(), 10_000) and not values_within(FLOOD.encode(), 1000)


def test_no_head_a_parser_reads_other_than_as_utf8_is_counted() -> None:
    """By construction, not by the list above: every head of up to four bytes from the bytes that
    decide an encoding, followed by JSON, is refused whenever ``json.detect_encoding`` of the whole
    reads it other than as UTF-8 — whatever the length, however it arrives (a stream of fewer than
    four bytes is never checked: it holds at most four values however it is read)."""
    alphabet = [b"\x00", b"\xfe", b"\xff", b"\xef", b"\xbb", b"\xbf", b"{", b" ", b'"']
    for size in range(5):
        for head in map(b"".join, itertools.product(alphabet, repeat=size)):
            for data in (head, head + b'"\\"",[1,2]'):
                if json.detect_encoding(data) == "utf-8":
                    continue
                with pytest.raises(NotUtf8Json):
                    values_within(data, 1000)
                if len(data) >= 4:  # a stream is checked at its fourth byte (at most 3 before it)
                    with pytest.raises(NotUtf8Json):
                        _stream(data, 1)


def test_a_restarted_count_checks_the_next_message_head() -> None:
    count = JsonValueCount()
    assert count.add(b"[1,2]") == 3
    count.restart()
    with pytest.raises(NotUtf8Json, match="UTF-16-LE"):
        count.add("[1]".encode("utf-16-le"))


def test_text_given_as_str_is_never_refused() -> None:
    """A ``str`` is parsed as it is (nothing to detect): a leading U+FEFF or NUL is the parser's to refuse."""
    assert json_values("\ufeff[1]") == 2
    assert values_within("\x00[1,2]", 1000)
    check_utf8_head(b'{"a"')  # UTF-8 JSON's head passes
