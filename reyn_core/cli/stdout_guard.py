"""Stdout is the command's output, and failing to write it is never a success.

``main`` runs every command — built-in or a plugin's — with ``sys.stdout`` guarded: a write or flush
whose reader went away (``reyn doctor | head -1``: ``EPIPE``) or a write to a stdout that was closed
when ``reyn`` started (``reyn doctor >&-``) raises ``OutputClosed``. It derives from
``BaseException``, as ``KeyboardInterrupt`` does, so no command's ``except Exception`` can turn it
into a failure message, another exit code, or success; ``main`` alone catches it and exits
``EXIT_OUTPUT_CLOSED`` (141 = 128 + SIGPIPE, what a shell reports for a command a closed pipe ended),
printing nothing.

Reyn does not restore SIGPIPE's default action instead: that would also end the process on a write
to a socket or a child's pipe whose other end closed (``mcp serve`` over HTTP, a stdio server that
exited), which are errors Reyn reports, not the end of its output.
"""

from __future__ import annotations

import os
from typing import Any

EXIT_OUTPUT_CLOSED = 141


class OutputClosed(BaseException):
    """Stdout can take no more output: its reader went away, or it was closed at start."""


class _Guarded:
    """A stream whose writes and flushes raise ``OutputClosed`` where stdout took nothing; every
    other attribute is the stream's (``buffer`` guarded too)."""

    def __init__(self, stream: Any, closed: bool = False) -> None:
        self._stream = stream
        self._closed = closed

    def _guard(self, method: str, *args: Any) -> Any:
        if self._closed:
            raise OutputClosed
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError as exc:
            raise OutputClosed from exc

    def write(self, data: Any) -> Any:
        return self._guard("write", data)

    def writelines(self, lines: Any) -> Any:
        return self._guard("writelines", lines)

    def flush(self) -> Any:
        return None if self._closed else self._guard("flush")

    @property
    def buffer(self) -> Any:
        return _Guarded(self._stream.buffer, self._closed)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guarded_stdout(stream: Any) -> Any:
    """``stream`` (``sys.stdout``) guarded; when it is None — file descriptor 1 was closed when
    Python started — the descriptor is first taken by ``/dev/null``, so no file, socket or child
    opened later gets it as its stdout, and every write raises ``OutputClosed``."""
    if stream is not None:
        return _Guarded(stream)
    try:
        os.fstat(1)
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:
            os.dup2(devnull, 1)
            os.close(devnull)
    return _Guarded(open(1, "w", closefd=False), closed=True)


def is_output_closed(exc: BaseException) -> bool:
    """Whether ``exc`` is ``OutputClosed``, or a group (a task group's) holding one."""
    if isinstance(exc, OutputClosed):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and any(
        isinstance(e, BaseException) and is_output_closed(e) for e in inner
    )


def silence(stream: Any) -> None:
    """Point ``stream``'s file descriptor at ``/dev/null``, so what is still buffered is flushed
    there at the interpreter's exit instead of failing again (and printing a traceback)."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # no stream, or not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


__all__ = ["EXIT_OUTPUT_CLOSED", "OutputClosed", "guarded_stdout", "is_output_closed", "silence"]
