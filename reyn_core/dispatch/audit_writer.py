"""The audit log's writer thread: the one owner of the log's file descriptor (``JsonlAuditLog`` in
``audit`` makes the lines; the event loop never touches the file).

Requests are gathered per event loop during one loop iteration and handed to the thread once, at the
iteration's end (``submit_soon``), as one ``_AuditOp`` holding that iteration's lines and checks. The
thread makes the lines (their JSON and argument hash), appends them with one ``os.write`` per batch
and settles every waiter with one ``call_soon_threadsafe`` per loop. Why gathered: handing each
request over on its own woke the thread once per request, so under 2,000 concurrent calls the loop
thread and the writer traded the GIL thousands of times inside one loop iteration (on a busy machine
each trade may wait for the OS to schedule the other thread), and every request cost a dataclass, a
closure and a notify — the loop's stall came from that and from making the lines on the loop (the
definition digest of every line, now computed once by the registry snapshot), not from file I/O.

A future is settled only after its line was handed to the OS (``write(2)``) or refused, so a call's
result never returns before its line is written: a SIGKILL right after a call returned loses none
of the lines of calls that returned. Before each batch the path is ``lstat``-ed: a rotated or deleted
file is reopened, and anything but a regular file (FIFO, device, socket, directory, symbolic link) is
refused — opened with ``O_NOFOLLOW|O_NONBLOCK`` so that nothing at the path can make a write block or
go elsewhere.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import describe_exception
from ..private_files import APPEND_FLAGS

if TYPE_CHECKING:
    import asyncio

    from ..calls import ToolCall, ToolCallOutcome

_log = logging.getLogger("reyn_core.dispatch")

_AUDIT_IDLE_S = 5.0  # the writer thread exits after this long without work (and starts again on demand)

MakeLine = Callable[["ToolCall", "ToolCallOutcome", float], bytes]
"""How the writer makes a line: ``JsonlAuditLog.record`` (call, outcome, end time)."""


def _file_kind(mode: int) -> str:
    for test, kind in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def lstat_log(path: Path) -> tuple[os.stat_result | None, str | None]:
    """The log file's own stat (None when absent), or why it cannot be examined."""
    try:
        return os.lstat(path), None
    except (FileNotFoundError, NotADirectoryError):  # absent (or a parent is a file: said later)
        return None, None
    except OSError as exc:
        return None, f"the audit log {path} cannot be written ({exc.strerror or exc})"


def not_regular(path: Path, mode: int) -> str:
    """Why a log path that is not a regular file is refused."""
    return (
        f"the audit log {path} is {_file_kind(mode)}, not a regular file; "
        "point [audit] log at a regular file (symbolic links are not followed)"
    )


def refusal(reason: str) -> str:
    """The ``before`` hook's refusal when the log cannot be written: fixed words with the code, which
    reach the model; ``reason`` (the log's host path, the OS error) goes to the operator's log, which
    the refusal cites (``log_remote_failure``)."""
    from ..remote_log import log_remote_failure

    where = log_remote_failure("audit", "the audit log cannot be written, so no call may run", reason)
    return f"the audit log cannot be written (RC006), so no call may run; {where}"


@dataclass(slots=True)
class AuditOp:
    """One hand-over to the writer thread: lines to append, ``(call, outcome, end time, future)``
    (future None on the blocking path), and checks (futures that only ask whether the log can be
    written). From a loop, one op holds all the requests of one loop iteration."""

    lines: list[tuple[Any, Any, float, asyncio.Future[Any] | None]] = field(default_factory=list)
    checks: list[asyncio.Future[Any]] = field(default_factory=list)
    loop: asyncio.AbstractEventLoop | None = None
    event: threading.Event | None = None
    result: str | None = None  # why nothing of this op could be written (None: fine)
    failed: dict[int, str] | None = None  # lines that alone could not be made, by index


class AuditWriter:
    """The thread that owns one audit log's file descriptor (see the module docstring)."""

    _all: weakref.WeakSet[AuditWriter] = weakref.WeakSet()

    def __init__(self, path: Path, make_line: MakeLine) -> None:
        self.path = path
        self._make_line = make_line
        self._cond = threading.Condition()
        self._queue: list[AuditOp] = []
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        # per event loop: the op gathering the requests of the loop's current iteration
        self._gathered: dict[asyncio.AbstractEventLoop, AuditOp] = {}
        AuditWriter._all.add(self)

    def submit(self, op: AuditOp) -> None:
        """Hand ``op`` over now (the blocking path, no loop)."""
        with self._cond:
            self._queue.append(op)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reyn-audit-log", daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

    def gathering(self, loop: asyncio.AbstractEventLoop) -> AuditOp:
        """The op of ``loop``'s current iteration (call from that loop's thread): add lines and checks
        to it; it is handed over by one callback once the iteration's requests are in."""
        op = self._gathered.get(loop)
        if op is None:
            op = self._gathered[loop] = AuditOp(loop=loop)
            loop.call_soon(self._hand_over, loop)
        return op

    def _hand_over(self, loop: asyncio.AbstractEventLoop) -> None:
        op = self._gathered.pop(loop, None)
        if op is not None:
            self.submit(op)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._cond.wait(timeout=_AUDIT_IDLE_S)
                if not self._queue:
                    self._thread = None
                    self._close()
                    return
                batch, self._queue = self._queue, []
            self._process(batch)

    def _process(self, batch: list[AuditOp]) -> None:
        try:
            reason = self._ensure_open()
            data = b"".join([line for op in batch for line in self._made(op)])
            if data and reason is None:
                reason = self._write(data)
        except Exception as exc:  # never leave a caller waiting
            reason = f"the audit log {self.path} cannot be written ({describe_exception(exc)})"
        for op in batch:
            op.result = reason
        _settle(batch)

    def _made(self, op: AuditOp) -> list[bytes]:
        """The lines of ``op``; one that cannot be made fails alone (``op.failed``)."""
        out = []
        for i, (call, outcome, at, _future) in enumerate(op.lines):
            try:
                out.append(self._make_line(call, outcome, at))
            except Exception as exc:
                if op.failed is None:
                    op.failed = {}
                op.failed[i] = f"the audit line could not be made ({describe_exception(exc)})"
        return out

    def _ensure_open(self) -> str | None:
        st, problem = lstat_log(self.path)
        if problem is not None:
            return problem
        if self._fd is not None:
            if st is not None and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == self._ident:
                return None
            self._close()  # rotated, deleted or replaced: open whatever is there now
        if st is not None and not stat.S_ISREG(st.st_mode):
            return not_regular(self.path, st.st_mode)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, APPEND_FLAGS, 0o600)
        except OSError as exc:
            if st is None:
                try:  # lost a race with something created at the path: name what it is
                    return not_regular(self.path, os.lstat(self.path).st_mode)
                except OSError:
                    pass
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):
            os.close(fd)
            return not_regular(self.path, fst.st_mode)
        self._fd, self._ident = fd, (fst.st_dev, fst.st_ino)
        return None

    def _write(self, data: bytes) -> str | None:
        assert self._fd is not None
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self._close()
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        return None

    def _close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = self._ident = None

    def _after_fork(self) -> None:
        """In a forked child the thread is gone: start afresh (the descriptor is shared, so reopen)."""
        self._cond = threading.Condition()
        self._queue = []
        self._gathered = {}
        self._thread = None
        self._fd = self._ident = None


def _audit_after_fork() -> None:
    for writer in list(AuditWriter._all):
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_audit_after_fork)


def _settle(batch: Sequence[AuditOp]) -> None:
    """Wake every waiter of a batch: one ``call_soon_threadsafe`` per event loop, events directly."""
    by_loop: dict[asyncio.AbstractEventLoop, list[AuditOp]] = {}
    for op in batch:
        if op.event is not None:
            op.event.set()
        elif op.loop is not None:
            by_loop.setdefault(op.loop, []).append(op)
    for loop, ops in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle_futures, ops)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass


def line_failure(op: AuditOp, index: int) -> str | None:
    """Why line ``index`` of ``op`` was not written (None: it was)."""
    return op.result or (op.failed.get(index) if op.failed else None)


def _settle_futures(ops: Sequence[AuditOp]) -> None:
    """On the loop: each check's future gets the refusal (None: allowed); each line's future is done,
    or raises ``OSError`` when its line was not written."""
    for op in ops:
        refused = None if op.result is None else refusal(op.result)
        for check in op.checks:
            if not check.done():
                check.set_result(refused)
        for i, (_call, _outcome, _at, future) in enumerate(op.lines):
            if future is None or future.done():
                continue
            why = line_failure(op, i)
            if why is None:
                future.set_result(None)
            else:
                _log.error("audit line lost: %s", why)
                future.set_exception(OSError(why))


__all__ = ["AuditOp", "AuditWriter", "line_failure", "lstat_log", "not_regular", "refusal"]
