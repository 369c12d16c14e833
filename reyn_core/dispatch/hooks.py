"""Running the policy hooks around a call: ``before`` hooks fail closed, ``after`` hooks never fail a call."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from ..calls import ToolCall, ToolCallHooks, ToolCallOutcome
from ..errors import ToolDenied, ToolError, describe_exception

_log = logging.getLogger("reyn_core.dispatch")


async def maybe_await(value: Any) -> Any:
    """``value``, awaited when it is awaitable."""
    return await value if inspect.isawaitable(value) else value


def _plain(value: Any) -> bool:
    """A hook's answer that needs no awaiting (the common None or a reason): no coroutine frame and
    no ``isawaitable`` test per hook per call."""
    return value is None or type(value) is str


async def run_before(hooks: ToolCallHooks, call: ToolCall) -> None:
    """Run every ``before`` hook; raise ``ToolDenied`` for a denial or for a hook that breaks."""
    for before in hooks.before:
        try:
            reason = before(call)
            if not _plain(reason):
                reason = await maybe_await(reason)
        except ToolError:
            raise
        except Exception as exc:  # a policy that breaks denies: fail closed
            from ..remote_log import log_failure

            # what it raised may name host paths: the operator's log has it, the model fixed words
            what = f"a policy hook ({before!r}) failed for a call to {call.tool.name!r}"
            raise ToolDenied(
                f"call to {call.tool.name!r} denied: a policy hook failed; {log_failure('hooks', what, exc)}",
                tool=call.tool.name,
            ) from None
        if reason:
            raise ToolDenied(f"call to {call.tool.name!r} denied by policy: {reason}", tool=call.tool.name)


async def run_after(hooks: ToolCallHooks, call: ToolCall, outcome: ToolCallOutcome) -> None:
    """Run every ``after`` hook; one that raises is logged and otherwise ignored."""
    for after in hooks.after:
        try:
            done = after(call, outcome)
            if done is not None:
                await maybe_await(done)
        except Exception as exc:  # observers must never turn a call into a failure, but say so
            _log.warning(
                "after hook %r failed for tool %r: %s", after, call.tool.name, describe_exception(exc)
            )
