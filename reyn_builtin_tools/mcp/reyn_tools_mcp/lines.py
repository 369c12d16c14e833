"""Newline-delimited JSON-RPC read from a hostile peer: lines bounded in size, split in linear time.

Both directions of the mcp pack's stdio (an upstream server's stdout, ``reyn mcp serve``'s stdin)
read through ``LineSplitter``: each chunk is searched for newlines once, the bytes of a line not yet
ended are appended to one buffer (never re-copied as it grows), and that buffer never holds more
than ``limit`` bytes. A line longer than ``limit`` (its newline not counted, nor a ``\r`` just before
it) is reported as one ``Overlong`` carrying its first ``HEAD`` bytes (for the reader to find the
request's id) and its bytes are dropped as they arrive until its newline; the next line is read as
usual. What is held at once is at most ``limit`` (one more for a ``\r``) plus the chunk being split
(``held_high_water``). A line is also bounded in JSON values (``values``, counted before it is parsed:
``reyn_core.host.values_within``; cost is per value, not per byte): a line over it is reported as one
``TooManyValues``, with its first ``HEAD`` bytes, instead of the line; a line that is not UTF-8 JSON
(UTF-16, UTF-32, a byte order mark: ``reyn_core.host.NotUtf8Json``) as one ``NotUtf8Line``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from reyn_core.host import NotUtf8Json, values_within

CHUNK = 64 * 1024
"""How much a reader takes from its pipe at a time (the chunk ``feed`` is given)."""
HEAD = 256
"""How many of an over-long line's first bytes its ``Overlong`` keeps."""


@dataclass(frozen=True)
class Overlong:
    """A line longer than ``limit`` bytes was skipped (its bytes were not kept but its first ``HEAD``)."""

    limit: int
    head: bytes = b""


@dataclass(frozen=True)
class TooManyValues:
    """A line holding more than ``limit`` JSON values was dropped unparsed (but its first ``HEAD``)."""

    limit: int
    head: bytes = b""


@dataclass(frozen=True)
class NotUtf8Line:
    """A line that is not UTF-8 JSON was dropped unparsed (but its first ``HEAD``); ``what`` says
    what it is (``NotUtf8Json``'s words: "JSON in UTF-16-LE; only UTF-8 …")."""

    what: str
    head: bytes = b""


Refused = Overlong | TooManyValues | NotUtf8Line
"""A line reported instead of read."""


class LineSplitter:
    """Split a byte stream into lines of at most ``limit`` bytes and ``values`` JSON values (None: no
    value bound); see the module docstring."""

    def __init__(self, limit: int, values: int | None = None) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1 byte, got {limit}")
        self.limit = limit
        self.values = values
        self._partial = bytearray()  # the line not yet ended (never more than ``limit`` bytes)
        self._skipping = False  # inside an over-long line: drop until its newline
        self.held_high_water = 0  # the most bytes held at once: the partial line plus one chunk

    def feed(self, chunk: bytes) -> list[bytes | Refused]:
        """The lines (without their newline) and over-long reports that ``chunk`` completes."""
        self.held_high_water = max(self.held_high_water, len(self._partial) + len(chunk))
        out: list[bytes | Refused] = []
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            piece_end = len(chunk) if end < 0 else end
            if not self._skipping:
                if self._over(chunk, start, piece_end):
                    kept = bytes(self._partial[:HEAD])
                    head = kept + chunk[start : min(piece_end, start + HEAD - len(kept))]
                    self._partial.clear()
                    self._skipping = True
                    out.append(Overlong(self.limit, head))
                else:
                    self._partial += chunk[start:piece_end]
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                out.append(self._bounded(bytes(self._partial)))
                self._partial.clear()
            start = end + 1
        return out

    def _over(self, chunk: bytes, start: int, piece_end: int) -> bool:
        """Whether the line with ``chunk[start:piece_end]`` is over the limit. One byte more is
        allowed if it is a ``\r``: the piece ends at a newline or at the chunk's end, so that ``\r``
        ends the line (``\r\n``) or, if more of the line follows, the next piece is over."""
        size = len(self._partial) + piece_end - start
        if size <= self.limit:
            return False
        last = chunk[piece_end - 1 : piece_end] if piece_end > start else bytes(self._partial[-1:])
        return size > self.limit + 1 or last != b"\r"

    @property
    def unended(self) -> bool:
        """Whether the input so far ends inside a line (not blank, not an over-long one)."""
        return not self._skipping and bool(self._partial.strip())

    def _bounded(self, line: bytes) -> bytes | TooManyValues | NotUtf8Line:
        """``line``, or its report if it holds more than ``values`` JSON values or is not UTF-8 JSON."""
        try:
            if self.values is None or values_within(line, self.values):
                return line
        except NotUtf8Json as exc:
            return NotUtf8Line(str(exc), line[:HEAD])
        return TooManyValues(self.values, line[:HEAD])

    def end(self) -> list[bytes | Refused]:
        """At end of input: the last line if it had no newline (as ``readline`` returns it)."""
        if self._skipping or not self._partial.strip():
            return []
        line = bytes(self._partial)
        self._partial.clear()
        return [self._bounded(line)]


async def read_lines(
    read: Callable[[int], Awaitable[bytes]], splitter: LineSplitter, *, last_unended: bool = True
) -> AsyncIterator[bytes | Refused]:
    """The lines of the stream ``read(CHUNK)`` takes from (``b""`` at its end), split by ``splitter``;
    with ``last_unended`` False, a last line without its newline is not one (``splitter.unended``)."""
    while chunk := await read(CHUNK):
        for item in splitter.feed(chunk):
            yield item
    for item in splitter.end() if last_unended else []:
        yield item


__all__ = [
    "CHUNK",
    "HEAD",
    "LineSplitter",
    "NotUtf8Line",
    "Overlong",
    "Refused",
    "TooManyValues",
    "read_lines",
]
