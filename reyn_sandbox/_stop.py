"""The caller's side of the launcher's stop pipe (``launcher_argv(..., stop_fd=)``, ``--stop-fd``).

One class for every caller that starts a launcher — the shell pack's calls, isolated plugins'
workers — so each stops a sandbox the same way and none can leave one running when it dies: the
launcher ends the sandbox when a byte arrives on the pipe or every write end is closed, and the
caller's death closes its end however it dies, whichever thread started the launcher, however early.
"""

from __future__ import annotations

import fcntl
import os
import signal


def caller_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) whose two ends are numbered from 3, close-on-exec. A caller that
    closed any of 0, 1, 2 gets those numbers back from ``os.pipe()``: the child's end there would be
    refused by the launcher (its descriptors take numbers from 3) or overwritten by the child's own
    standard streams, and the caller's end there would take whatever the caller later writes to its
    "stdout" or "stderr". Each end is moved up (``F_DUPFD_CLOEXEC``) before anything is built on it."""
    ends = list(os.pipe())
    try:
        for i, fd in enumerate(ends):
            if fd < 3:
                ends[i] = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
                os.close(fd)
    except BaseException:
        for fd in set(ends):
            os.close(fd)
        raise
    return ends[0], ends[1]


class StopPipe:
    """The stop pipe of one launch, made before the launcher is spawned.

    ``launcher_fd`` (its read end) is the launcher's: give it as ``launcher_argv(..., stop_fd=)`` and
    spawn the launcher with it open (``subprocess``'s ``pass_fds``), then call ``launched()`` (or
    ``stop()`` if the spawn failed), which closes the caller's copy. The write end stays here, open
    until ``stop()`` (or ``close()``, once the launcher has been waited for): a byte written to it
    (a process forked from the caller meanwhile holds a copy of the end, so the close alone would
    not hang the pipe up), then closed. The launcher then kills
    the sandbox's PID 1 — the kernel kills every process in it — and exits only once the kernel has
    reaped them all. The caller's death closes the write end too. Each step runs once."""

    __slots__ = ("_write", "launcher_fd")

    KILL_AFTER_S = 5.0
    """How long a caller lets the launcher end the sandbox after ``stop()`` before it sends the
    launcher ``SIGKILL`` (a launcher stuck before it reads the pipe)."""

    def __init__(self) -> None:
        read, write = caller_pipe()
        self.launcher_fd: int | None = read
        self._write: int | None = write

    def launched(self) -> None:
        """The launcher holds its end now (or never will): close the caller's copy of it."""
        fd, self.launcher_fd = self.launcher_fd, None
        if fd is not None:
            os.close(fd)

    def stop(self) -> None:
        """End the sandbox: a byte, then the write end closed (without blocking: a full pipe has been
        asked already; a launcher gone has nothing left to stop). The byte never raises ``SIGPIPE``
        in the caller (``_write_quietly``), whatever its disposition: a launcher that exited
        meanwhile leaves no reader."""
        self.launched()
        fd, self._write = self._write, None
        if fd is None:
            return
        try:
            _write_quietly(fd, b"x")
        finally:
            os.close(fd)

    def close(self) -> None:
        """The launcher has been waited for (or was never started): nothing is left to stop, so the
        write end is closed without a byte. Each caller closes this way once it has reaped the
        launcher, and ``stop()`` only while it may still run."""
        self.launched()
        fd, self._write = self._write, None
        if fd is not None:
            os.close(fd)


def _write_quietly(fd: int, data: bytes) -> None:
    """Write ``data`` to pipe ``fd`` without blocking, ignoring a full or readerless pipe — and
    without the ``SIGPIPE`` a readerless pipe sends the writing thread, which kills a caller that
    keeps its default disposition (as many command-line programs do): the signal is blocked in this
    thread around the write, the one it raised (thread-directed, so pending here) is consumed, then
    the mask is restored."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPIPE})
    try:
        try:
            os.set_blocking(fd, False)
            os.write(fd, data)
        except OSError:
            pass  # full (asked already) or no reader (nothing left to stop)
        if signal.SIGPIPE not in previous:  # pending only if raised while blocked here
            signal.sigtimedwait({signal.SIGPIPE}, 0)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
