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
import time
from collections.abc import Awaitable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..calls import ToolCall, ToolCallHooks, ToolCallOutcome
from ..definition_digest import definition_digest
from ..jsondata import canonical_json
from .audit_writer import AuditOp, AuditWriter, line_failure, lstat_log, not_regular, refusal

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
        self._writer = AuditWriter(self.path, self._line)

    def record(self, call: ToolCall, outcome: ToolCallOutcome, *, at: float | None = None) -> bytes:
        """The JSON line (with its newline) for one call that ended at ``at`` (``time.time()``; None:
        now)."""
        ended = datetime.now(timezone.utc) if at is None else datetime.fromtimestamp(at, timezone.utc)
        record = {
            "time": ended.isoformat(timespec="milliseconds"),
            **self._identity(call),
            "status": outcome.kind,
            "duration_ms": round(outcome.duration_s * 1000, 3),
            "args_sha256": argument_hash(call.arguments, key=self.hash_key),
        }
        return (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()

    def _identity(self, call: ToolCall) -> dict[str, Any]:
        """Which call: surface, agent, tool, its definition digest, plugin and tree digest."""
        origin = call.tool.origin
        return {
            "surface": call.surface,
            "agent": call.ctx.agent,
            "tool": call.tool.name,
            # exactly which definition was called (the lock pins the same digest): the registry
            # snapshot's, computed once from the definition it serves
            "definition_sha256": call.definition_digest or definition_digest(call.tool),
            "plugin": origin.plugin_id if origin else None,
            "digest": origin.tree_digest if origin else None,
        }

    def abandoned(self, call: ToolCall) -> None:
        """Append a ``call.abandoned`` event for a call whose handler still ran (in its thread, or an
        async one ignoring its cancellation) when its host exited without waiting for it
        (``HandlerThreads.abandoned``): the call's own line, if any, says how it ended for its caller
        (``cancelled``, ``timeout``); this one says its handler ran on, and that what it did
        afterwards is not recorded. Blocks until written (off the event loop); raises ``OSError``
        when the line was not written."""
        self.event(
            {
                "event": "call.abandoned",
                **self._identity(call),
                "args_sha256": argument_hash(call.arguments, key=self.hash_key),
                "reason": "its handler (a thread, or an async one ignoring its cancellation) was still "
                "running when the process exited; what it did afterwards is not recorded",
            }
        )

    def event(self, fields: Mapping[str, Any]) -> None:
        """Append one event line (an approval's ``approval.requested`` … ``approval.executed``, an
        abandoned call's ``call.abandoned``): the
        time, then ``fields``. Blocks until written (call it off the event loop); raises ``OSError``
        when the line was not written."""
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **fields}
        line = (json.dumps(record, separators=(",", ":"), ensure_ascii=True) + "\n").encode()
        self._write_now((line, None, 0.0, None))

    def _write_now(self, entry: tuple[Any, Any, float, None]) -> None:
        """Write one line and wait for it; raises ``OSError`` (logged) when it was not written."""
        why = line_failure(self._wait(AuditOp(lines=[entry], event=threading.Event())), 0)
        if why is not None:
            _log.error("audit line lost: %s", why)
            raise OSError(why)

    def _line(self, call: Any, outcome: Any, at: float) -> bytes:
        if type(call) is bytes:  # an event line, made whole by ``event``
            return call
        return self.record(call, outcome, at=at)

    def __call__(self, call: ToolCall, outcome: ToolCallOutcome) -> Awaitable[None] | None:
        """Append the call's line. In an event loop this returns an awaitable that is done once the
        line was written (the line is queued at once, whether or not it is awaited); without a
        running loop it writes before returning. Raises ``OSError`` when the line was not written.

        Only the call's end time is taken here: the line (argument hash, JSON) is made on the writer
        thread, from the call's read-only snapshot and immutable outcome."""
        at = time.time()
        loop = _running_loop()
        if loop is None:
            self._write_now((call, outcome, at, None))
            return None
        future = loop.create_future()
        self._writer.gathering(loop).lines.append((call, outcome, at, future))
        return future

    def _wait(self, op: AuditOp) -> AuditOp:
        self._writer.submit(op)
        assert op.event is not None
        op.event.wait()
        return op

    def unwritable_reason(self) -> str | None:
        """Why the log could not be appended to, judged without writing anything (None: it can)."""
        st, problem = lstat_log(self.path)
        if problem is not None:
            return problem
        if st is not None and not stat.S_ISREG(st.st_mode):
            return not_regular(self.path, st.st_mode)
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
        (open or reopen, regular file only) runs on the writer thread, never on the event loop; in a
        loop the hook returns a future of the refusal (None: allowed), settled by the writer."""
        loop = _running_loop()
        if loop is None:
            op = self._wait(AuditOp(event=threading.Event()))
            return None if op.result is None else refusal(op.result)
        future = loop.create_future()
        self._writer.gathering(loop).checks.append(future)
        return future

    def hooks(self) -> ToolCallHooks:
        """This sink as a ``ToolCallHooks``: a ``before`` check that refuses calls while the log
        cannot be written, and the ``after`` hook that writes the line."""
        return ToolCallHooks(before=(self.refuse_when_unwritable,), after=(self,))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
