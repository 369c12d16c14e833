"""Size-capped text reading from an open descriptor: never loads a whole large file."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from reyn_core import ToolExecutionError

SNIFF_BYTES = 8192
CHUNK = 64 * 1024


def looks_binary(head: bytes) -> bool:
    """A file is treated as binary when its first bytes contain a NUL byte (as git and grep do)."""
    return b"\x00" in head


def refuse_if_binary(fd: int, size: int, shown: str) -> None:
    """Raise when the file behind ``fd`` looks binary; text tools return text only."""
    if looks_binary(os.pread(fd, SNIFF_BYTES, 0)):
        raise ToolExecutionError(
            f"{shown!r} looks like a binary file ({size} bytes, contains NUL bytes); "
            "the file tools read and edit text only"
        )


@dataclass(frozen=True, slots=True)
class TextSlice:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of a file, possibly truncated."""

    content: str
    start_line: int
    end_line: int
    truncated: bool
    reached_end: bool


def read_lines(fd: int, *, start_line: int, limit: int | None, max_bytes: int) -> TextSlice:
    """Read up to ``limit`` lines from line ``start_line`` on, keeping at most ``max_bytes`` bytes.

    Lines before ``start_line`` are skipped in bounded chunks without being kept; a line longer than
    what is left of the budget is cut, and ``truncated`` says the byte cap stopped the read.
    """
    reader = io.BufferedReader(io.FileIO(os.dup(fd), "rb"), CHUNK)  # closed below
    try:
        reader.seek(0)
        line_no = 1
        while line_no < start_line:
            piece = reader.readline(CHUNK)
            if not piece:
                return TextSlice("", start_line, start_line - 1, False, True)
            if piece.endswith(b"\n"):
                line_no += 1
        kept = bytearray()
        lines = 0
        truncated = False
        while limit is None or lines < limit:
            budget = max_bytes - len(kept)
            if budget <= 0:
                truncated = bool(reader.peek(1))
                break
            piece = reader.readline(min(budget, CHUNK))
            if not piece:
                break
            kept += piece
            if piece.endswith(b"\n"):
                lines += 1
        if kept and not kept.endswith(b"\n"):
            lines += 1  # a last line without newline, or one cut by the byte cap
        reached_end = not reader.peek(1)
    finally:
        reader.close()
    text = bytes(kept).decode("utf-8", errors="replace")
    return TextSlice(text, start_line, start_line + lines - 1, truncated, reached_end)


def read_whole(fd: int, size_limit: int, shown: str) -> bytes:
    """The whole file behind ``fd``, refusing files larger than ``size_limit`` bytes."""
    size = os.fstat(fd).st_size
    if size > size_limit:
        raise ToolExecutionError(
            f"{shown!r} is {size} bytes; the limit for this operation is {size_limit} bytes"
        )
    chunks = []
    total = 0
    offset = 0
    while True:
        chunk = os.pread(fd, CHUNK, offset)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        offset += len(chunk)
        if total > size_limit:  # the file grew while being read
            raise ToolExecutionError(f"{shown!r} is larger than {size_limit} bytes; refused")
    return b"".join(chunks)
