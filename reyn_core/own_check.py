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
"""

from __future__ import annotations

import inspect
import sys
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
    a field of its own for the host to log (``failure_text``) — never in a model-visible one."""

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


def ask_available(tool: ToolDefinition, ctx: ToolContext) -> CheckAnswer:
    """Ask ``tool.available(ctx)`` (a tool without one is available)."""
    check = tool.available
    if check is None:
        return YES
    try:
        result = check(ctx)
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
    "CheckAnswer",
    "CheckFailed",
    "CheckResultError",
    "ask_available",
    "availability_problem",
    "failure_text",
    "must_propagate",
]
