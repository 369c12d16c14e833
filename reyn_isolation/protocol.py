"""The pipe protocol between the host and an isolated plugin's worker: length-prefixed JSON frames.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one object, at most
``MAX_DEPTH`` deep and ``MAX_VALUES`` values). Both sides bound what they accept: a frame longer than
the reader's limit is refused as soon as its header is read, never held in memory (the host then
stops the worker, ``frames.FrameParser``), so a worker that floods its pipe costs the host neither
memory nor time.
Standard library and ``reyn_core.host``'s JSON bounds (``depth_within``, ``values_within``) only.
A body is parsed as the text its UTF-8 decodes to, never as bytes: a parser of bytes would detect
UTF-16 or UTF-32 and read other values than were counted.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

from reyn_core.host import NotUtf8Json, depth_within, parse_json, values_within

HEADER = struct.Struct(">I")
MAX_FRAME = (1 << 32) - 1
"""The longest frame the header can describe."""
MAX_DEPTH = 128
"""The deepest a frame's JSON may nest (containers, the frame's own object counting as 1). Schemas
nest at most 32 levels and a call's arguments 64; a deeper frame is refused whole, so the host's
recursive steps (canonical JSON, schema checks, rendering) never meet data near Python's recursion
limit. The worker refuses a result that would nest deeper (an ``execution_error``, like a result over
the size limit); only a forged frame reaches the host's check."""
MAX_VALUES = 1_000_000
"""The most JSON values a frame may hold, counted before it is parsed (parsing costs per value, not per
byte: a result of 4 MiB of tiny values would cost the host ~700 MB). A frame of the default result
limit (1 MiB) never holds more; the worker refuses a result that would (an ``execution_error``), so
only a forged frame, or a limit raised far past the default, meets the host's check."""
CONTROL_LIMIT = 1 << 20
"""The longest frame either side accepts outside a call's result (load requests, definitions, calls)."""


class ProtocolError(Exception):
    """The other side broke the protocol (malformed header or JSON, a closed pipe mid-frame)."""


class FrameTooLarge(Exception):
    """A frame longer than the reader's limit; its body was not read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a frame of {size} bytes is over the limit of {limit} bytes")
        self.size = size
        self.limit = limit


def encode(message: dict[str, Any]) -> bytes:
    """``message`` as one frame (compact JSON; non-JSON values are a ``TypeError``)."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode(
        "utf-8", "surrogatepass"
    )
    if len(body) > MAX_FRAME:
        raise ValueError(f"a message of {len(body)} bytes cannot be framed")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    """A frame's body as its message; ``ProtocolError`` for anything but one JSON object in UTF-8 —
    nesting deeper than the parser's recursion limit included (its ``RecursionError`` is the other
    side's doing, like any malformed frame, and never escapes to the reader's caller). Its values are
    counted first (``MAX_VALUES``), and what is parsed is its UTF-8 text (a lone surrogate passes, as
    ``encode`` writes one: the host's checks name it), so no parser detects another encoding."""
    try:
        if not values_within(body, MAX_VALUES):
            raise ProtocolError(f"a frame holds more than {MAX_VALUES} JSON values")
        text = body.decode("utf-8", "surrogatepass")
    except NotUtf8Json as exc:
        raise ProtocolError(f"a frame is {exc}") from None
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"a frame is not UTF-8: {exc.reason} at byte {exc.start}") from None
    try:
        message = parse_json(text)
    except ValueError as exc:
        raise ProtocolError(f"a frame is not valid JSON: {str(exc)[:200]}") from None
    except RecursionError:
        raise ProtocolError(f"a frame's JSON nests deeper than {MAX_DEPTH} levels") from None
    if not isinstance(message, dict):
        raise ProtocolError("a frame is not a JSON object")
    if not depth_within(message, MAX_DEPTH):
        raise ProtocolError(f"a frame's JSON nests deeper than {MAX_DEPTH} levels")
    return message


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to the (blocking) file descriptor ``fd``."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FrameReader:
    """Reads frames from a blocking file descriptor (the worker's first request)."""

    def __init__(self, fd: int, chunk: int = 1 << 16) -> None:
        self.fd = fd
        self.chunk = chunk
        self._buffer = bytearray()

    def _fill(self, need: int) -> bool:
        """Read until the buffer holds ``need`` bytes; False at end of file before any byte was read."""
        while len(self._buffer) < need:
            data = os.read(self.fd, max(self.chunk, need - len(self._buffer)))
            if not data:
                if self._buffer:
                    raise ProtocolError("the pipe closed in the middle of a frame")
                return False
            self._buffer += data
        return True

    def read(self, limit: int) -> dict[str, Any] | None:
        """The next message, or None at end of file. Raises ``FrameTooLarge`` or ``ProtocolError``."""
        if not self._fill(HEADER.size):
            return None
        (size,) = HEADER.unpack_from(self._buffer)
        del self._buffer[: HEADER.size]
        if size > limit:
            raise FrameTooLarge(size, limit)
        self._fill(size)
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        return decode(body)


__all__ = [
    "CONTROL_LIMIT",
    "FrameReader",
    "FrameTooLarge",
    "MAX_DEPTH",
    "ProtocolError",
    "decode",
    "encode",
    "write_all",
]
