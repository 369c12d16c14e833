"""A worker's frame is bounded in JSON values before it is parsed (issue 24, invariant 6;
``protocol.MAX_VALUES``): parsing costs per value, not per byte, so a frame of tiny values — possible
within a result limit an operator raised — is a ``ProtocolError`` naming the bound (the host then
stops the worker, as for any malformed frame), while a frame as long made of one string is read."""

from __future__ import annotations

import pytest

from reyn_isolation.protocol import HEADER, MAX_VALUES, ProtocolError, decode, encode


def test_a_frame_of_too_many_values_is_refused_unparsed_and_one_long_string_is_read() -> None:
    flood = b'{"op":"result","id":1,"ok":true,"data":[' + b"0," * MAX_VALUES + b"0]}"
    with pytest.raises(ProtocolError, match=f"more than {MAX_VALUES} JSON values"):
        decode(flood)
    text = {"op": "result", "id": 1, "ok": True, "data": "0," * MAX_VALUES}
    assert decode(encode(text)[HEADER.size :]) == text


def _flood(values: int) -> str:
    """A result frame whose escaped quote, read as UTF-8 bytes of UTF-16, would hide the rest."""
    return '{"op":"result","id":1,"ok":true,"data":{"s":"\\"","x":[' + "[]," * (values // 2) + "[]]}}"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16", "utf-32-be"])
def test_a_frame_in_utf16_or_utf32_is_refused_unparsed_and_its_utf8_twin_read(encoding: str) -> None:
    """The reviewer's forged frame (issue 24, task E): in UTF-16 its values were counted as a handful
    and then parsed (``json.loads`` of bytes detects the encoding): now a ``ProtocolError`` naming
    what it is. Its UTF-8 twin is counted over the bound, and one under the bound is read."""
    with pytest.raises(ProtocolError, match=f"a frame is JSON in {encoding.upper()}; only UTF-8 JSON"):
        decode(_flood(MAX_VALUES + 10).encode(encoding))
    with pytest.raises(ProtocolError, match=f"more than {MAX_VALUES} JSON values"):
        decode(_flood(MAX_VALUES + 10).encode())
    assert decode(_flood(1000).encode())["data"]["s"] == '"'


def test_a_frame_with_a_byte_order_mark_or_bytes_not_utf8_is_refused() -> None:
    """Reyn's frames never carry a byte order mark (``encode``); what is parsed is the body's UTF-8
    text, so no parser meets another encoding; a lone surrogate ``encode`` wrote still crosses."""
    with pytest.raises(ProtocolError, match="a frame is JSON in UTF-8 with a byte order mark"):
        decode(b"\xef\xbb\xbf" + encode({"op": "ping"})[HEADER.size :])
    with pytest.raises(ProtocolError, match="a frame is not UTF-8: invalid start byte at byte 7"):
        decode(b'{"op":"\x80"}')
    lone = {"op": "result", "id": 1, "ok": True, "data": "\ud800"}
    assert decode(encode(lone)[HEADER.size :]) == lone


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" + b"0" * 400 + b".5"])
def test_a_frame_with_a_number_beyond_a_float_is_malformed_and_the_largest_float_passes(
    number: bytes,
) -> None:
    """``json.loads`` reads ``1e400`` as Infinity, which no JSON carries onward (issue 24, task F):
    a frame holding one is malformed, as one holding ``NaN`` is (``encode`` writes neither). The
    controls: the largest and smallest floats, ``-0.0``, and big integers are read as they are."""
    with pytest.raises(ProtocolError, match="beyond a 64-bit float's range"):
        decode(b'{"op":"result","id":1,"ok":true,"data":[1.5,' + number + b"]}")
    numbers = {"op": "result", "data": [1.7976931348623157e308, 5e-324, -0.0, 10**400, "1e400"]}
    assert decode(encode(numbers)[HEADER.size :]) == numbers
