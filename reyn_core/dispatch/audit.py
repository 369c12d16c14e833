"""The JSONL audit log: ``JsonlAuditLog`` (one line per call, written off the event loop) and
``argument_hash``."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import threading
import weakref
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..calls import ToolCall, ToolCallHooks, ToolCallOutcome
from ..definition_digest import definition_digest
from ..errors import describe_exception
from ..jsondata import canonical_json

if TYPE_CHECKING:
    import asyncio

_log = logging.getLogger("reyn_core.dispatch")


_process_key: bytes | None = None
_process_key_lock = threading.Lock()


def process_key() -> bytes:
    """A random key made once per process: what ``argument_hash`` uses when given no key (a host
    that did not load a profile). Hashes made with it cannot be compared across processes."""
    global _process_key
    with _process_key_lock:
        if _process_key is None:
            _process_key = secrets.token_bytes(32)
        return _process_key


def argument_hash(arguments: Any, *, key: bytes | None = None) -> str:
    """HMAC-SHA256, keyed with ``key`` (the installation's private key, ``reyn_core.loading.
    argument_key``; None: ``process_key()``), of the canonical JSON of the arguments. The audit log
    and the spans record this, never the arguments: without the key a low-entropy argument cannot
    be guessed back by hashing candidates (docs/security.md)."""
    # surrogatepass: a lone surrogate from a model must hash like anything else.
    data = canonical_json(arguments).encode("utf-8", "surrogatepass")
    return "hmac-sha256:" + hmac.new(key or process_key(), data, hashlib.sha256).hexdigest()


_AUDIT_OPEN_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_AUDIT_IDLE_S = 5.0  # the writer thread exits after this long without work (and starts again on demand)


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


def _lstat(path: Path) -> tuple[os.stat_result | None, str | None]:
    """The log file's own stat (None when absent), or why it cannot be examined."""
    try:
        return os.lstat(path), None
    except (FileNotFoundError, NotADirectoryError):  # absent (or a parent is a file: said later)
        return None, None
    except OSError as exc:
        return None, f"the audit log {path} cannot be written ({exc.strerror or exc})"


def _not_regular(path: Path, mode: int) -> str:
    return (
        f"the audit log {path} is {_file_kind(mode)}, not a regular file; "
        "point [audit] log at a regular file (symbolic links are not followed)"
    )


@dataclass(slots=True)
class _AuditOp:
    """One request to the writer thread: append ``line`` (a write) or only check (``line`` None)."""

    line: bytes | None
    loop: asyncio.AbstractEventLoop | None = None
    future: asyncio.Future[str | None] | None = None
    event: threading.Event | None = None
    result: str | None = None  # why the line could not be written / the log cannot be (None: fine)


class _AuditWriter:
    """The thread that owns the audit log's file descriptor; the event loop never touches the file.

    Requests are batched: everything queued while one ``os.write`` runs goes into the next one. A
    request's future is settled only after its line was handed to the OS (or refused), so a call's
    result never returns before its audit line is written. Before each batch the path is
    ``lstat``-ed: a rotated or deleted file is reopened, and anything but a regular file (FIFO,
    device, socket, directory, symbolic link) is refused — opened with ``O_NOFOLLOW|O_NONBLOCK`` so
    that nothing at the path can make a write block or go elsewhere.
    """

    _all: weakref.WeakSet[_AuditWriter] = weakref.WeakSet()

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cond = threading.Condition()
        self._queue: list[_AuditOp] = []
        self._thread: threading.Thread | None = None
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        _AuditWriter._all.add(self)

    def submit(self, op: _AuditOp) -> None:
        with self._cond:
            self._queue.append(op)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reyn-audit-log", daemon=True)
                self._thread.start()
            else:
                self._cond.notify()

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

    def _process(self, batch: list[_AuditOp]) -> None:
        try:
            reason = self._ensure_open()
            data = b"".join(op.line for op in batch if op.line is not None)
            if data and reason is None:
                reason = self._write(data)
        except Exception as exc:  # never leave a caller waiting
            reason = f"the audit log {self.path} cannot be written ({describe_exception(exc)})"
        for op in batch:
            op.result = reason
        _settle(batch)

    def _ensure_open(self) -> str | None:
        st, problem = _lstat(self.path)
        if problem is not None:
            return problem
        if self._fd is not None:
            if st is not None and stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == self._ident:
                return None
            self._close()  # rotated, deleted or replaced: open whatever is there now
        if st is not None and not stat.S_ISREG(st.st_mode):
            return _not_regular(self.path, st.st_mode)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, _AUDIT_OPEN_FLAGS, 0o600)
        except OSError as exc:
            if st is None:
                try:  # lost a race with something created at the path: name what it is
                    return _not_regular(self.path, os.lstat(self.path).st_mode)
                except OSError:
                    pass
            return f"the audit log {self.path} cannot be written ({exc.strerror or exc})"
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode):
            os.close(fd)
            return _not_regular(self.path, fst.st_mode)
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
        self._thread = None
        self._fd = self._ident = None


def _audit_after_fork() -> None:
    for writer in list(_AuditWriter._all):
        writer._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_audit_after_fork)


def _settle(batch: Sequence[_AuditOp]) -> None:
    """Wake every waiter of a batch: one ``call_soon_threadsafe`` per event loop, events directly."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_AuditOp]] = {}
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


def _settle_futures(ops: Sequence[_AuditOp]) -> None:
    for op in ops:
        if op.future is not None and not op.future.done():
            op.future.set_result(op.result)


class JsonlAuditLog:
    """An append-only JSONL audit sink, usable as an ``after`` hook.

    One line per call: time, surface, agent, tool, the tool's definition digest, plugin id, its tree
    digest, status, duration, argument hash. Lines are written off the event loop by one writer
    thread per log, batched, with ``O_APPEND`` writes of whole lines, so concurrent processes
    interleave whole lines only.

    Guarantee: when the hook's future is done — the dispatcher awaits it before the call's result
    returns — the line has been handed to the OS with ``write(2)`` (it survives a crash of this
    process, not a power loss: there is no ``fsync``). A line that cannot be written is logged as an
    error, and every later call is refused by ``refuse_when_unwritable`` until the log works again.
    """

    def __init__(self, path: str | os.PathLike[str], *, hash_key: bytes | None = None) -> None:
        self.path = Path(path)
        self.hash_key = hash_key
        self._writer = _AuditWriter(self.path)

    def record(self, call: ToolCall, outcome: ToolCallOutcome) -> bytes:
        """The JSON line (with its newline) for one call."""
        origin = call.tool.origin
        record = {
            "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "surface": call.surface,
            "agent": call.ctx.agent,
            "tool": call.tool.name,
            # exactly which definition was called (the lock pins the same digest): computed per line,
            # a canonical JSON of the definition, so it cannot disagree with what was served
            "definition_sha256": definition_digest(call.tool),
            "plugin": origin.plugin_id if origin else None,
            "digest": origin.tree_digest if origin else None,
            "status": outcome.kind,
            "duration_ms": round(outcome.duration_s * 1000, 3),
            "args_sha256": argument_hash(call.arguments, key=self.hash_key),
        }
        return (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()

    def event(self, fields: Mapping[str, Any]) -> None:
        """Append one event line (an approval's ``approval.requested`` … ``approval.executed``): the
        time, then ``fields``. Blocks until written (call it off the event loop); raises ``OSError``
        when the line was not written."""
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **fields}
        line = (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
        op = _AuditOp(line, event=threading.Event())
        self._writer.submit(op)
        assert op.event is not None
        op.event.wait()
        if op.result is not None:
            _log.error("audit line lost: %s", op.result)
            raise OSError(op.result)

    def __call__(self, call: ToolCall, outcome: ToolCallOutcome) -> Awaitable[None] | None:
        """Append the call's line. In an event loop this returns an awaitable that is done once the
        line was written (the line is queued at once, whether or not it is awaited); without a
        running loop it writes before returning. Raises ``OSError`` when the line was not written."""
        waiting = self._request(self.record(call, outcome))
        if waiting is None:
            return None
        return self._raise_on_failure(waiting)

    async def _raise_on_failure(self, waiting: Awaitable[str | None]) -> None:
        reason = await waiting
        if reason is not None:
            _log.error("audit line lost: %s", reason)
            raise OSError(reason)

    def _request(self, line: bytes | None) -> asyncio.Future[str | None] | None:
        """Queue one op; in a running loop return its future, else block until done (raising on failure)."""
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:
            op = _AuditOp(line, event=threading.Event())
            self._writer.submit(op)
            assert op.event is not None
            op.event.wait()
            if op.result is not None:
                if line is None:
                    raise _Unwritable(op.result)
                raise OSError(op.result)
            return None
        op = _AuditOp(line, loop=loop, future=loop.create_future())
        self._writer.submit(op)
        return op.future

    def unwritable_reason(self) -> str | None:
        """Why the log could not be appended to, judged without writing anything (None: it can)."""
        st, problem = _lstat(self.path)
        if problem is not None:
            return problem
        if st is not None and not stat.S_ISREG(st.st_mode):
            return _not_regular(self.path, st.st_mode)
        node = self.path if st is not None else self.path.parent
        while not node.exists():
            node = node.parent
        if node != self.path and not node.is_dir():
            return f"the audit log {self.path} cannot be created: {node} is not a directory"
        if not os.access(node, os.W_OK | (os.X_OK if node.is_dir() else 0)):
            return f"the audit log {self.path} is not writable ({node} refuses writes)"
        return None

    def refuse_when_unwritable(self, call: ToolCall) -> Awaitable[str | None] | str | None:
        """``before`` hook: fail closed — no tool runs while its call cannot be audited. The check
        (open or reopen, regular file only) runs on the writer thread, never on the event loop."""
        try:
            waiting = self._request(None)
        except _Unwritable as exc:
            return _refusal(str(exc))
        return None if waiting is None else _refusal_when(waiting)

    def hooks(self) -> ToolCallHooks:
        """This sink as a ``ToolCallHooks``: a ``before`` check that refuses calls while the log
        cannot be written, and the ``after`` hook that writes the line."""
        return ToolCallHooks(before=(self.refuse_when_unwritable,), after=(self,))


class _Unwritable(Exception):
    pass


def _refusal(reason: str) -> str:
    return f"{reason}, so no call may run"


async def _refusal_when(waiting: Awaitable[str | None]) -> str | None:
    reason = await waiting
    return None if reason is None else _refusal(reason)
