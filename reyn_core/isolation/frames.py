"""The host's incremental frame parser: bytes in, messages out, never more than the limit held."""

from __future__ import annotations

import json
from typing import Any

from reyn_core.isolation.protocol import HEADER, FrameTooLarge, ProtocolError


class FrameParser:
    """Feed it what the pipe gave; it returns the complete messages. A frame over ``limit`` raises
    ``FrameTooLarge`` as soon as its header is read, before any of its body is kept."""

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
            try:
                message = json.loads(body)
            except ValueError as exc:
                raise ProtocolError(f"a frame is not valid JSON: {exc}") from None
            if not isinstance(message, dict):
                raise ProtocolError("a frame is not a JSON object")
            messages.append(message)
        return messages

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held."""
        return len(self._buffer)


__all__ = ["FrameParser"]
