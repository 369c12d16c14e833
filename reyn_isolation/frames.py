"""The host's incremental frame parser: bytes in, messages out, never more than the limit held."""

from __future__ import annotations

from typing import Any

from reyn_isolation.protocol import HEADER, FrameTooLarge, decode


class FrameParser:
    """Feed it what the pipe gave; it returns the complete messages. A frame over ``limit`` raises
    ``FrameTooLarge`` as soon as its header is read, before any of its body is kept; a frame that is
    not one JSON object (``protocol.decode``) raises ``ProtocolError``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buffer += data
        messages: list[dict[str, Any]] = []
        while len(self._buffer) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buffer)
            if size > self.limit:
                raise FrameTooLarge(size, self.limit)
            if len(self._buffer) < HEADER.size + size:
                break
            body = bytes(self._buffer[HEADER.size : HEADER.size + size])
            del self._buffer[: HEADER.size + size]
            messages.append(decode(body))
        return messages

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held."""
        return len(self._buffer)


__all__ = ["FrameParser"]
