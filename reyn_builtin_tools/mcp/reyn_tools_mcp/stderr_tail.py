"""A stdio server's stderr: handed a pipe of its own per start, drained into a bounded tail.

The server is started confined (``reyn_sandbox``), and the launcher hands the command only an
anonymous pipe, a connected unix stream socket or the null device: a file — even a temporary one
opened for reading and writing — would let the command change its metadata or reopen it through
``/proc/self/fd/2``. So each start gets a fresh pipe (never shared: a pipe can be reopened for
reading through the same path), whose read end a daemon thread drains into ``StderrTail``: the
last ``TAIL_BYTES`` bytes the server (every start of it) wrote, for the operator's log only
(``failures``: a server's stderr never reaches a model). ``text()`` first takes what is waiting in
the pipes itself, so what a server wrote before it died is there however far the thread got (as
it was in the file). The thread ends, closing the read end, when every copy of the write end is
closed — the server and everything it started gone.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, TextIO

TAIL_BYTES = 64 * 1024


class StderrTail:
    """The last ``TAIL_BYTES`` bytes written to the pipes ``feeding`` hands out."""

    def __init__(self) -> None:
        self._tail = bytearray()
        self._lock = threading.Lock()  # the tail, and every read of the pipes (in order)
        self._open: set[int] = set()  # read ends not at end of file yet

    @contextlib.asynccontextmanager
    async def feeding(
        self, open_transport: Callable[[TextIO], contextlib.AbstractAsyncContextManager[Any]]
    ) -> AsyncIterator[Any]:
        """Enter ``open_transport(errlog)`` with ``errlog`` the write end of a fresh pipe drained
        here; the host's copy is closed once the transport is entered (the server holds its own)."""
        read_fd, write_fd = os.pipe()  # both close-on-exec: the spawn hands the server a copy as 2
        os.set_blocking(read_fd, False)
        with self._lock:
            self._open.add(read_fd)
        errlog = open(write_fd, "w", encoding="utf-8", errors="replace")
        threading.Thread(target=self._drain, args=(read_fd,), name="reyn-mcp-stderr", daemon=True).start()
        try:
            async with open_transport(errlog) as streams:
                errlog.close()
                yield streams
        finally:
            errlog.close()

    def _drain(self, fd: int) -> None:
        """Until end of file: wait for ``fd`` to be readable, then take what is there. The one place
        ``fd`` is closed, so its number is never reused under another reader."""
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            poller.poll()
            with self._lock:
                if not self._take(fd):
                    self._open.discard(fd)
                    os.close(fd)
                    return

    def _take(self, fd: int) -> bool:
        """Read what is waiting in ``fd`` into the tail (the lock held); False at end of file."""
        while True:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not data:
                return False
            self._tail += data
            del self._tail[: max(0, len(self._tail) - TAIL_BYTES)]

    def text(self, limit: int) -> str:
        """The last ``limit`` characters written so far."""
        with self._lock:
            for fd in self._open:
                self._take(fd)
            data = bytes(self._tail)
        return data.decode("utf-8", errors="replace")[-limit:]
