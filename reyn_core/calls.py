"""A tool call as policy hooks see it: ``ToolCall``, ``ToolCallOutcome`` and the ``ToolCallHooks``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .context import ToolContext
from .errors import ToolError
from .tool import ToolDefinition


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as policy hooks see it.

    ``arguments`` are validated, and already bound to the handler, when a ``before`` hook sees the
    call. An ``after`` hook may also see a call refused before validation (``gate_refused``,
    ``invalid_arguments``); its ``arguments`` are then as sent (``{}`` when they were not a JSON
    object). Either way they are a read-only snapshot (a ``dict`` whose dicts and lists raise
    ``TypeError`` when changed): a hook allows or denies a call, it never rewrites it.
    """

    tool: ToolDefinition
    arguments: Mapping[str, Any]
    ctx: ToolContext
    surface: str
    definition_digest: str | None = None
    """``definition_digest(tool)``, as the registry snapshot computed it once (the dispatcher fills
    it; None for a call made up outside the dispatcher)."""


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """How a call ended, as ``after`` hooks see it."""

    status: Literal["ok", "error"]
    duration_s: float
    result: Any = None
    error: ToolError | None = None

    @property
    def kind(self) -> str:
        """``ok`` or the error kind."""
        return "ok" if self.error is None else self.error.kind


BeforeHook = Callable[[ToolCall], "str | Awaitable[str | None] | None"]
AfterHook = Callable[[ToolCall, ToolCallOutcome], "Awaitable[None] | None"]


@dataclass(frozen=True, slots=True)
class ToolCallHooks:
    """Policy points around every call.

    A ``before`` hook returns None to allow, or a reason string to deny (or raises ``ToolDenied``);
    it may be async, e.g. an approval prompt. ``after`` hooks observe every outcome; an after hook
    that raises is ignored so auditing can never break a call. The plugin loader fills these from
    the ``reyn_before_tool_call`` / ``reyn_after_tool_call`` hooks of enabled plugins.
    """

    before: tuple[BeforeHook, ...] = ()
    after: tuple[AfterHook, ...] = ()

    def __add__(self, other: ToolCallHooks) -> ToolCallHooks:
        return ToolCallHooks(self.before + other.before, self.after + other.after)


class CallApprovals(Protocol):
    """The approval check a registry carries (``reyn_core.approvals.ApprovalGate``): the dispatcher
    asks it, after binding and before the ``before`` hooks, whether a call may run."""

    def selects(self, tool: ToolDefinition) -> bool:
        """Whether any approval rule names ``tool`` (others skip the check)."""
        ...

    async def admit(
        self, tool: ToolDefinition, arguments: Any, ctx: ToolContext, surface: str, approval: str | None
    ) -> Any:
        """None (no rule applies), an admission (an approval was consumed), or raises."""
        ...

    def executed(self, admission: Any, status: str) -> None:
        """Record how a call an approval let through ended."""
        ...
