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

A check runs with a deadline (``CHECK_DEADLINE_S``), in one of the checks' daemon threads: at most
``MAX_THREADS`` of them exist in the process (busy and idle together), by construction — when none
is idle and ``MAX_THREADS`` exist, an ask waits in a queue for a free thread until its deadline,
and past it fails closed unrun (``CheckLate``: it "was not run", never that it did not answer; one
that got a thread only after waiting and then ran past the deadline says so too). Callers ask at
once, each an ask of its own in its own ``ctx``; a listing asks all its checks at once (``ask_all``)
and waits for them until one deadline, so a caller waits ``CHECK_DEADLINE_S`` at most per listing
or call, however many and however slow its checks. A check
that has not answered by then is a failure (``CheckLate``: the tool is hidden, ``RT011``). While
any ask of a check runs past its deadline, that check (the same function object, whatever tool or
``ctx`` it serves) is not asked again, by any caller: a later ask fails at once (no thread, no
wait) until every late ask of it has returned — a hung check is hung for everyone, and not asking it
again keeps a hung check from taking a thread per listing. A check asked from within its own ask in
the same thread's context (a check that lists its registry) fails at once too; one that asks from
a thread of its own is bounded by ``MAX_THREADS`` like any ask. A late ask keeps its check's frame
(and so its ``ctx``) until it returns; an ended one keeps nothing of its asker. No answer is kept:
every listing and call is answered by asks of its own.
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
    from collections.abc import Sequence

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
"""How long one listing or call waits for the tools' own ``available(ctx)`` (seconds, in all)."""
MAX_THREADS = 32
"""How many checks' threads may exist in the process at once (busy and idle): past it, an ask waits
for one of them to be free, until its deadline."""


class CheckLate(TimeoutError):
    """``available(ctx)`` did not answer within ``CHECK_DEADLINE_S`` (the message says when part of
    it went waiting for a checks' thread), was not run (its ask still queued at the deadline: all
    ``MAX_THREADS`` busy, with asks of any check, this one's included), or was not asked (an earlier
    ask of it still runs past its deadline, or it was asked from within its own ask). The tool is
    unavailable until an ask answers in time."""


def ask_available(tool: ToolDefinition, ctx: ToolContext) -> CheckAnswer:
    """Ask ``tool.available(ctx)`` (a tool without one is available), within the deadline."""
    return ask_all([(tool, ctx)])[0]


def ask_all(asked: Sequence[tuple[ToolDefinition, ToolContext]]) -> list[CheckAnswer]:
    """Each ``tool.available(ctx)`` of ``asked``, all asked at once (each an ask of its own, in a
    checks' thread) and all waited for until one deadline: a listing waits ``CHECK_DEADLINE_S`` at
    most, whatever the number of its checks and however slow they are. Tools that share one check
    asked in one ``ctx`` (the same objects) share its one ask: the check is not told the tool."""
    until = time.monotonic() + CHECK_DEADLINE_S
    asks: dict[tuple[int, int], CheckAnswer | _Ask] = {}
    for tool, ctx in asked:
        key = (id(tool.available), id(ctx))
        if key not in asks:
            asks[key] = _start(tool, ctx)
    answers: dict[tuple[int, int], CheckAnswer] = {}
    try:
        for tool, ctx in asked:
            key = (id(tool.available), id(ctx))
            if key not in answers:
                started = asks[key]
                answers[key] = started if isinstance(started, CheckAnswer) else _answer(tool, started, until)
    except BaseException:  # an interruption (``must_propagate``): no ask is left without its asker
        for key, started in asks.items():
            if key not in answers and isinstance(started, _Ask):
                _give_up(started)
        raise
    return [answers[id(tool.available), id(ctx)] for tool, ctx in asked]


def _give_up(ask: _Ask) -> str:
    """``ask``'s asker waits no longer for it: a queued ask is dropped unrun (``"queued"``); a running
    one counts as late until it returns (``"late"``: its check is not asked again meanwhile); one
    that ended meanwhile is left as it is (``"ended"``: its answer came in time after all)."""
    with _lock:
        if not ask.started:
            ask.ended = True
            return "queued"
        if ask.ended or ask.late:
            return "ended"
        ask.late = True
        _late[id(ask.check)] = _late.get(id(ask.check), 0) + 1
        return "late"


class _Ask:
    """One ask of a check, run by a checks' thread: its answer or what it raised, whether it ended,
    and whether it ran past its deadline (late)."""

    __slots__ = ("check", "context", "ctx", "done", "ended", "error", "late", "result", "started", "waited")

    def __init__(self, check: Any, ctx: ToolContext, context: contextvars.Context) -> None:
        self.check, self.ctx, self.context = check, ctx, context
        self.done = threading.Lock()  # held until the ask ends (its one asker waits for it)
        self.done.acquire()
        self.ended = self.late = self.started = False
        self.waited = False  # queued while every checks' thread was busy (with any asks)
        self.result: Any = None
        self.error: BaseException | None = None


_late: dict[int, int] = {}  # id(check) → how many of its asks run past their deadline
_lock = threading.Lock()
_jobs: SimpleQueue[_Ask] = SimpleQueue()
_threads = 0  # checks' threads in existence (under _lock): never more than MAX_THREADS
_idle = 0  # of them, waiting for a job (under _lock)
_queued = 0  # asks in _jobs that no thread has taken yet (under _lock)
_within: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar("reyn_within_check", default=())


def _start(tool: ToolDefinition, ctx: ToolContext) -> CheckAnswer | _Ask:
    """An ask of ``tool.available(ctx)`` started in a checks' thread, or the answer when it is not
    asked: no check, or a ``CheckLate`` saying why none is started. Past the thread cap the ask is
    queued for the next free thread (its asker waits for it until its deadline, ``_answer``)."""
    global _queued, _threads
    check = tool.available
    if check is None:
        return YES
    if id(check) in _within.get():
        return _failed(_too_late(tool, "was not asked: it was asked from within its own ask"))
    with _lock:
        if id(check) in _late:
            said = "was not asked: an earlier ask of it still runs past its deadline"
            return _failed(_too_late(tool, said))
        ask = _Ask(check, ctx, contextvars.copy_context())
        if _idle > _queued or _threads >= MAX_THREADS:  # a thread is free, or none may start: queued
            ask.waited = _idle <= _queued
            _queued += 1
            _jobs.put(ask)
            return ask
        _threads += 1
        ask.started = True
    try:
        threading.Thread(target=_checks_thread, args=(ask,), name="reyn-available-check", daemon=True).start()
    except BaseException as exc:  # no thread (a process limit): not asked
        with _lock:
            _threads -= 1
        if must_propagate(exc):
            raise
        return _failed(exc)
    return ask


def _answer(tool: ToolDefinition, ask: _Ask, until: float) -> CheckAnswer:
    """What ``ask`` answered by ``until`` (past it: ``CheckLate``, the ask counted as late)."""
    if not ask.done.acquire(timeout=max(0.0, until - time.monotonic())):
        gave_up = _give_up(ask)
        if gave_up != "ended":
            return _failed(_too_late(tool, _late_words(gave_up, ask.waited)))
    try:
        if ask.error is not None:
            raise ask.error
        result = ask.result
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
        return _failed(exc)
    finally:
        ask.error = ask.result = None


def _failed(failure: BaseException) -> CheckAnswer:
    return CheckAnswer(False, None, failure)


def _late_words(gave_up: str, waited: bool) -> str:
    """What became of an ask its asker gave up on at its deadline (``_give_up``): never run (still
    queued), or run but not answered — from the start of its deadline, or only after waiting for a
    thread. Fixed words (no measured times): the log of failures records each wording once per check."""
    busy = f"all {MAX_THREADS} checks' threads were busy"  # with any asks: this check's own may be among them
    if gave_up == "queued":
        if waited:
            return f"was not run: {busy} until its deadline ({CHECK_DEADLINE_S:g} s)"
        return f"was not run: no checks' thread took it before its deadline ({CHECK_DEADLINE_S:g} s)"
    if waited:
        return (
            f"did not answer by its deadline ({CHECK_DEADLINE_S:g} s), part of which it spent waiting "
            f"for a checks' thread ({busy} when it was asked)"
        )
    return f"did not answer within {CHECK_DEADLINE_S:g} s"


def check_name(check: object) -> str:
    """``check``'s module-qualified name, as the operator's log names it (a callable object: its type's)."""
    return f"{getattr(check, '__module__', '?')}.{getattr(check, '__qualname__', type(check).__qualname__)}"


def _too_late(tool: ToolDefinition, said: str) -> CheckLate:
    return CheckLate(
        f"available(ctx) {check_name(tool.available)} (plugin {tool.plugin_id!r}) {said}; the tools it "
        "checks are unavailable until an ask of it answers in time"
    )


def _checks_thread(ask: _Ask) -> None:
    """A daemon thread that runs asks, one at a time, then waits for the next (it never ends: at
    most ``MAX_THREADS`` exist)."""
    global _idle
    while True:
        check, ctx, context = ask.check, ask.ctx, ask.context
        del ask.ctx, ask.context  # the ask keeps nothing of its asker; this frame, until it returns
        try:
            ask.result = context.run(_run, check, ctx)
        except BaseException as exc:
            ask.error = exc
        del check, ctx, context
        with _lock:
            ask.ended = True
            if ask.late:
                key = id(ask.check)
                _late[key] -= 1
                if not _late[key]:
                    del _late[key]
            _idle += 1
        ask.done.release()  # its asker wakes (without waiting for the lock this thread held)
        del ask
        ask = _next_ask()


def _next_ask() -> _Ask:
    """The next queued ask its asker still waits for (one whose deadline passed while it was queued
    is dropped unrun); this thread is idle meanwhile."""
    global _idle, _queued
    while True:
        ask = _jobs.get()
        with _lock:
            _idle -= 1
            _queued -= 1
            if not ask.ended:
                ask.started = True
                return ask
            _idle += 1


def _run(check: Any, ctx: ToolContext) -> Any:
    """``check(ctx)`` in the asker's context copy, marked as within an ask of ``check``."""
    _within.set((*_within.get(), id(check)))
    return check(ctx)


def _after_fork() -> None:
    """A forked child has none of the parent's threads: it starts with no ask late, none idle."""
    global _lock, _jobs, _idle, _queued, _threads
    _late.clear()
    _lock, _jobs, _idle, _queued, _threads = threading.Lock(), SimpleQueue(), 0, 0, 0


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
    "MAX_THREADS",
    "CheckAnswer",
    "CheckLate",
    "CheckFailed",
    "CheckResultError",
    "ask_all",
    "ask_available",
    "availability_problem",
    "check_name",
    "failure_text",
    "must_propagate",
]
