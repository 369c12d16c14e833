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
