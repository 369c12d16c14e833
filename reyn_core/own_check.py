"""A tool's own ``available(ctx)``, asked strictly: the one place it is called.

Only ``True`` or ``False`` (exactly: type ``bool``) is an answer. Anything else — an object whose
truth is decided by its own ``__bool__`` (which can raise, or say yes to anything), a coroutine of an
``async def`` check (always true if tested) — is a failure of the check, as is an exception it
raised: the tool is hidden (fail closed), and the failure goes to the operator's log, never to a
model (``gates.available`` words the refusal: ``RT011``). A ``ToolError`` it raises is its own
reason, shown as such. ``KeyboardInterrupt``, ``GeneratorExit`` and asyncio's ``CancelledError``
propagate; every other exception, ``SystemExit`` and any other ``BaseException`` included, is a
failure of the check.

An ``async def`` check (or any other callable that is not a plain check) is refused when the tool
is registered (``availability_problem``, ``RT006``): a synchronous gate cannot await it.

A check runs with a deadline (``CHECK_DEADLINE_S``), in one of a few daemon threads kept for checks:
the asker waits for its answer until then, and a check that has not answered is a failure
(``CheckLate``: the tool is hidden, ``RT011``). While one ask of a check runs, no other is started:
a later asker waits for it until *its* deadline, then asks anew — so a check that never returns
holds one thread and makes its askers wait one deadline in all, and its tool is hidden until an ask
answers in time. No answer is kept: every listing and call is answered by an ask of its own.
"""

from __future__ import annotations

import contextvars
import inspect
import os
import sys
import threading
import time
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import ToolError, ToolGateRefused

if TYPE_CHECKING:
    from .context import ToolContext
    from .tool import ToolDefinition


class CheckAnswer(NamedTuple):
    """What ``available(ctx)`` answered: ``allowed``; the tool's own words when it raised a
    ``ToolError`` (``reason``, model-visible); what failed otherwise (``failure``: for the
    operator's log only)."""

    allowed: bool
    reason: str | None = None
    failure: BaseException | None = None


YES = CheckAnswer(True)
NO = CheckAnswer(False)


class CheckResultError(TypeError):
    """``available(ctx)`` returned something that is not ``True`` or ``False`` (its repr is in the
    message: for the operator's log only). ``kind`` names the result's type: a repr may differ on
    every call (an address), the kind of failure does not."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class CheckFailed(ToolGateRefused):
    """An isolated plugin's worker refused a call because the tool's own check failed: its message
    is fixed words, and ``failure`` the text of what failed (a traceback), which the worker sends in
    a field of its own (``failure_text``) — never in a model-visible one. In the host the pipe
    handler raises it again and the dispatcher logs ``failure`` in the registry's log of failures
    (``gates.failed_check``, as for a check that failed in process)."""

    def __init__(self, tool: str, failure: str) -> None:
        reason = f"tool {tool!r} is unavailable: its availability check failed (RT011)"
        super().__init__(
            f"tool {tool!r} is refused (call gate): {reason}", tool=tool, layer="call", reason=reason
        )
        self.failure = failure


def failure_text(failure: BaseException, limit: int = 16_000) -> str:
    """What failed, as the operator's log keeps it (the traceback; the last ``limit`` characters)."""
    import traceback

    try:
        text = "".join(traceback.format_exception(failure))
    except Exception:
        text = f"{type(failure).__module__}.{type(failure).__qualname__} (its text could not be made)"
    return text[-limit:]


CHECK_DEADLINE_S = 1.0
"""How long a listing or a call waits for a tool's own ``available(ctx)`` (seconds)."""


class CheckLate(TimeoutError):
    """``available(ctx)`` did not answer within ``CHECK_DEADLINE_S`` (or an earlier ask of the same
    check still runs past its deadline): the tool is unavailable until an ask answers in time."""


def ask_available(tool: ToolDefinition, ctx: ToolContext) -> CheckAnswer:
    """Ask ``tool.available(ctx)`` (a tool without one is available), within the deadline."""
    check = tool.available
    if check is None:
        return YES
    try:
        result = _asked(tool, check, ctx)
        if result is True:
            return YES
        if result is False:
            return NO
        kind = f"{type(result).__module__}.{type(result).__qualname__}"
        raise CheckResultError(_not_a_bool(result, kind), kind)
    except ToolError as exc:  # a tool may say why it is unavailable (e.g. how to configure it)
        return CheckAnswer(False, exc.message)
    except BaseException as exc:
        if must_propagate(exc):
            raise
        return CheckAnswer(False, None, exc)


class _Ask:
    """One ask of a check, run by a checks' thread: its answer or what it raised, and when it ended."""

    __slots__ = ("check", "context", "ctx", "deadline", "done", "ended", "error", "result")

    def __init__(self, check: Any, ctx: ToolContext) -> None:
        self.check, self.ctx, self.context = check, ctx, contextvars.copy_context()
        self.deadline = time.monotonic() + CHECK_DEADLINE_S
        self.done = threading.Lock()  # held until the ask ends; each who waits for it passes it on
        self.done.acquire()
        self.ended = False
        self.result: Any = None
        self.error: BaseException | None = None


_asking: dict[int, _Ask] = {}  # id(check) → its ask that runs (which holds the check: the id is its)
_asking_lock = threading.Lock()
_jobs: SimpleQueue[_Ask] = SimpleQueue()
_idle = threading.Semaphore(0)  # one token per checks' thread waiting for a job


def _asked(tool: ToolDefinition, check: Any, ctx: ToolContext) -> Any:
    """What ``check(ctx)`` returned, asked in a checks' thread: raises what it raised, or
    ``CheckLate`` when it (or the ask of it that was running) did not answer in time."""
    until = time.monotonic() + CHECK_DEADLINE_S
    while True:
        with _asking_lock:
            running = _asking.get(id(check))
            if running is None:
                ask = _asking[id(check)] = _Ask(check, ctx)
        if running is None:
            _jobs.put(ask)
            if not _idle.acquire(blocking=False):  # no thread waits for a job: one more
                try:
                    threading.Thread(target=_checks_thread, name="reyn-available-check", daemon=True).start()
                except BaseException:  # no thread (a process limit): this ask ends unanswered
                    _ended(ask)
                    raise
            if not _waited(ask, CHECK_DEADLINE_S):
                raise _late(tool)
            if ask.error is not None:
                raise ask.error
            return ask.result
        # an earlier ask of this check runs: wait for it, not past its deadline nor ours, then ask anew
        if not _waited(running, max(0.0, min(running.deadline, until) - time.monotonic())):
            raise _late(tool)


def _waited(ask: _Ask, timeout: float) -> bool:
    """Whether ``ask`` ended within ``timeout`` seconds."""
    if not ask.done.acquire(timeout=timeout):
        return False
    ask.done.release()  # for the next who waits for it
    return True


def _late(tool: ToolDefinition) -> CheckLate:
    check = tool.available
    code = f"{getattr(check, '__module__', '?')}.{getattr(check, '__qualname__', type(check).__qualname__)}"
    return CheckLate(
        f"available(ctx) of tool {tool.name!r} (plugin {tool.plugin_id!r}, {code}) did not answer within "
        f"{CHECK_DEADLINE_S:g} s; the tool is unavailable until it answers in time (while an ask of it "
        "still runs, it is not asked again)"
    )


def _checks_thread() -> None:
    """A daemon thread that runs asks (one at a time); it waits for the next when done."""
    while True:
        ask = _jobs.get()
        if ask.ended:  # ended unanswered when no thread could start for it
            continue
        try:
            ask.result = ask.context.run(ask.check, ask.ctx)
        except BaseException as exc:
            ask.error = exc
        _ended(ask)
        del ask
        _idle.release()


def _ended(ask: _Ask) -> None:
    """The check of ``ask`` may be asked again; its asker and waiters are woken."""
    with _asking_lock:
        if _asking.get(id(ask.check)) is ask:
            del _asking[id(ask.check)]
        ask.ended = True
    ask.done.release()


def _after_fork() -> None:
    """A forked child has none of the parent's threads: it starts with no ask running, none idle."""
    global _asking_lock, _jobs, _idle
    _asking.clear()
    _asking_lock, _jobs, _idle = threading.Lock(), SimpleQueue(), threading.Semaphore(0)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def must_propagate(exc: BaseException) -> bool:
    """Whether ``exc`` is an interruption a check must not swallow: ``KeyboardInterrupt``,
    ``GeneratorExit``, asyncio's ``CancelledError`` (none exists while asyncio is not imported)."""
    if isinstance(exc, KeyboardInterrupt | GeneratorExit):
        return True
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(exc, asyncio.CancelledError)


def _not_a_bool(result: Any, kind: str) -> str:
    """What a non-bool result was, for the log; an awaitable is closed (it will never be awaited)."""
    if inspect.iscoroutine(result) or inspect.isgenerator(result):
        try:
            result.close()
        except Exception:
            pass
        return f"available(ctx) returned an unawaited {kind} (an async check?), not True or False"
    try:
        shown = repr(result)[:400]
    except Exception as exc:
        shown = f"(its repr raised {type(exc).__name__})"
    return f"available(ctx) returned {kind} {shown}, not True or False"


def availability_problem(check: object) -> str:
    """What makes ``check`` unusable as a tool's ``available`` ('' when nothing): it must be a
    synchronous callable, since the gates ask it synchronously on every listing and call."""
    if check is None:
        return ""
    if not callable(check):
        return f"available must be callable or None, got {type(check).__name__}"
    call = type(check).__call__  # a class's own call, for an object with an async ``__call__``
    if (
        inspect.iscoroutinefunction(check)
        or inspect.isasyncgenfunction(check)
        or (not inspect.isroutine(check) and inspect.iscoroutinefunction(call))
    ):
        return (
            f"available must be a plain function returning True or False, not an async one "
            f"({getattr(check, '__qualname__', type(check).__qualname__)}): the gates ask it "
            "synchronously, so its answer would never be awaited"
        )
    return ""


__all__ = [
    "CHECK_DEADLINE_S",
    "CheckAnswer",
    "CheckLate",
    "CheckFailed",
    "CheckResultError",
    "ask_available",
    "availability_problem",
    "failure_text",
    "must_propagate",
]
