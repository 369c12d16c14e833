"""Reading one recorded file: the whole file is hashed and compared with its recorded sha256, and
only those same bytes are served (one open, one read: nothing can be swapped between the check and
the answer), cut to a window of lines."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from dataclasses import dataclass

from .listing import SourceFile

log = logging.getLogger("reyn_tools_source")
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class SourceRefused(Exception):
    """A recorded file that is not served, and why (``message`` is whole sentences)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def verified_bytes(entry: SourceFile, max_bytes: int) -> bytes:
    """The bytes of ``entry``, read once, when their sha256 equals the recorded one."""
    if entry.problem is not None or entry.sha256 is None:
        raise SourceRefused(f"{entry.path} is not served: {entry.problem or 'it has no recorded hash'}.")
    try:
        fd = os.open(entry.location, _FLAGS)
    except OSError as exc:
        raise SourceRefused(f"{entry.path} cannot be read: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise SourceRefused(f"{entry.path} is not a regular file; it is not served.")
        if st.st_size > max_bytes:
            raise SourceRefused(
                f"{entry.path} is {st.st_size:,} bytes, over the limit of {max_bytes:,} "
                "(plugins.source.settings.max_file_bytes); it is not served."
            )
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise SourceRefused(f"{entry.path} grew over the limit of {max_bytes:,} bytes while being read.")
    actual = hashlib.sha256(data).hexdigest()
    if actual != entry.sha256:
        # The operator hears of it too: an installed file that changed is worth more than a tool error.
        log.warning(
            "reyn_src_read: %s (%s) differs from its recorded hash; not served", entry.path, entry.location
        )
        raise SourceRefused(
            f"{entry.path} differs from its recorded hash (recorded sha256 {entry.sha256[:16]}…, "
            f"on disk {actual[:16]}…): the installed file was changed, so it is not served. "
            "Reinstall the distribution to restore it."
        )
    return data


@dataclass(frozen=True, slots=True)
class Window:
    """Lines ``start``..``end`` (1-based, inclusive) of a file of ``total`` lines."""

    text: str
    start: int
    end: int
    total: int
    truncated: bool


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\n`` only (``str.splitlines`` would also break at form feeds and
    U+2028, and the line numbers would not match an editor's)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def line_window(text: str, start: int, max_chars: int) -> Window:
    """The lines of ``text`` from ``start`` on, as many whole lines as fit in ``max_chars`` (a
    single longer line is cut, and ``truncated`` says so)."""
    lines = _lines(text)
    total = len(lines)
    if start > max(total, 1):
        raise SourceRefused(f"the file has {total} lines; start_line {start} is past its end.")
    out: list[str] = []
    used, index, cut = 0, start - 1, False
    while index < total:
        line = lines[index]
        if used + len(line) > max_chars:
            if not out:  # one line longer than the window: cut it rather than return nothing
                out.append(line[:max_chars])
                index += 1
                cut = True
            break
        out.append(line)
        used += len(line)
        index += 1
    return Window("".join(out), start, start - 1 + len(out), total, cut or index < total)
