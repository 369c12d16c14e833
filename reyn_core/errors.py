"""Every error Reyn raises, in one place.

Tool errors carry a stable ``kind`` string. ``dispatch_tool`` turns them into the model-facing
envelope ``{"status": "error", "error": {"kind": ..., "message": ...}}``; ``invoke_tool`` raises them.

=================  =====================================================================
kind               meaning
=================  =====================================================================
not_found          no tool of that name is registered
gate_refused       a gate layer (role, operator, call) refuses the tool on this surface
invalid_arguments  the arguments do not match the tool's schema (``errors`` has JSON pointers)
runtime_missing    the tool's handler, or a host bridge it needs, is not available
timeout            the handler ran past its time limit and was cancelled
denied             a policy hook (or the tool itself, e.g. a path outside its roots) refused, or an
                   approval does not cover the call (``reason`` names why: expired, used, drifted)
approval_required  the call needs a person's approval first (``approval`` is the pending request's id)
cancelled          the handler was cancelled from inside (not by the caller)
execution_error    the handler raised; the message is the exception's, never a traceback
not_run            a batch stopped before this call: an earlier side-effecting call of it failed
=================  =====================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from reyn_core.moved import moved_attributes
from reyn_core.unicode_text import escape_lone_surrogates


class ReynError(Exception):
    """Base of every exception Reyn raises on purpose; ``message`` says what went wrong (as ``str``)."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """One reason arguments were rejected: a JSON pointer into the arguments and a message."""

    pointer: str
    message: str

    def render(self) -> str:
        """``/path: message`` (or just the message at the root)."""
        return f"{self.pointer}: {self.message}" if self.pointer else self.message


class ToolError(ReynError):
    """A failure of one tool call. ``kind`` is stable and machine-readable; ``message`` is for the model.

    Tool handlers may raise this (or a subclass) to report a failure in their own words; any other
    exception from a handler becomes ``ToolExecutionError``.
    """

    kind: str = "execution_error"
    envelope_fields: ClassVar[tuple[str, ...]] = ()
    """The attributes a subclass adds to the envelope's ``error``, after ``kind`` and ``message``, in
    this order (one that is None is left out)."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool

    def to_envelope(self) -> dict[str, object]:
        """The model-facing error envelope of ``dispatch_tool``. Its text is text UTF-8 can carry: a
        lone surrogate (from a handler's message, or quoted from a model's arguments) is shown as its
        ``\\udXXXX`` escape, so an error cannot break the surface that sends it."""
        error: dict[str, object] = {"kind": self.kind, "message": escape_lone_surrogates(self.message)}
        for name in self.envelope_fields:
            value = getattr(self, name)
            if value is not None:
                error[name] = _carried(value)
        return {"status": "error", "error": error}


def _carried(value: Any) -> Any:
    """An envelope field's value (a string, or the list of ``{"path", "message"}`` of invalid
    arguments) with each string's lone surrogates escaped."""
    if isinstance(value, str):
        return escape_lone_surrogates(value)
    if isinstance(value, list):
        return [_carried(v) for v in value]
    if isinstance(value, dict):
        return {k: _carried(v) for k, v in value.items()}
    return value


class ToolNotFound(ToolError):
    """No tool of that name is registered (or visible) in this registry."""

    kind = "not_found"


class ToolGateRefused(ToolError):
    """A gate refused the tool; ``layer`` is ``role``, ``operator`` or ``call``."""

    kind = "gate_refused"
    envelope_fields = ("layer",)

    def __init__(self, message: str, *, tool: str | None = None, layer: str = "", reason: str = "") -> None:
        super().__init__(message, tool=tool)
        self.layer = layer
        self.reason = reason


class InvalidToolArguments(ToolError):
    """Arguments failed validation; ``problems`` lists each one with its JSON pointer."""

    kind = "invalid_arguments"
    envelope_fields = ("errors",)

    def __init__(
        self, message: str, *, tool: str | None = None, problems: Sequence[ArgumentProblem] = ()
    ) -> None:
        super().__init__(message, tool=tool)
        self.problems = tuple(problems)

    @property
    def errors(self) -> list[dict[str, str]]:
        """``problems`` as the envelope writes them: ``{"path": pointer, "message": ...}`` each."""
        return [{"path": p.pointer, "message": p.message} for p in self.problems]


class ToolRuntimeMissing(ToolError):
    """The handler cannot be imported, is absent, or needs a host bridge the host did not supply."""

    kind = "runtime_missing"


class ToolTimeout(ToolError):
    """The handler ran longer than its ``timeout_s`` and was cancelled."""

    kind = "timeout"


class ToolDenied(ToolError):
    """A policy refused the call: a ``reyn_before_tool_call`` hook, or the tool's own safety checks."""

    kind = "denied"


class ApprovalRefused(ToolDenied):
    """An approval that does not cover this call: ``reason`` is a stable code (``denied``,
    ``expired``, ``used``, ``voided``, ``unknown``, ``arguments_differ``, ``definition_changed``,
    ``plugin_changed``, ``lock_changed``, ``agent_differs``, ``entry_differs``, ``tool_differs``,
    ``not_approver``, ``unavailable``); nothing of the call ran."""

    envelope_fields = ("reason", "approval")

    def __init__(
        self, message: str, *, tool: str | None = None, reason: str, approval: str | None = None
    ) -> None:
        super().__init__(message, tool=tool)
        self.reason = reason
        self.approval = approval


class ToolApprovalRequired(ToolError):
    """The call waits for a person's approval; nothing of it ran. ``approval`` is the id of the
    pending request (durable: any process with the same profile can decide it)."""

    kind = "approval_required"
    envelope_fields = ("approval",)

    def __init__(
        self, message: str, *, tool: str | None = None, approval: str, approvers: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message, tool=tool)
        self.approval = approval
        self.approvers = approvers


class ToolCancelled(ToolError):
    """The handler was cancelled from inside; the caller's own cancellation is never converted."""

    kind = "cancelled"


class ToolExecutionError(ToolError):
    """The handler raised an unexpected exception. The message names its type, never a traceback."""

    kind = "execution_error"


class ToolNotRun(ToolError):
    """In a batch (``dispatch_batch``), a call after a side-effecting call that failed or waits for
    approval: it was not started, because it may depend on what that call would have done."""

    kind = "not_run"


class ApprovalDecisionError(ReynError):
    """An approval request cannot be decided: unknown id, no longer pending, or the deciding channel
    (``user`` / ``operator``) is not among the request's approvers."""


class ToolRegistrationError(ReynError):
    """A tool cannot be registered. ``code`` is a stable diagnostic code (see docs/diagnostics.md);
    ``hint`` is the fix, by default the code's own (``reyn_core.code_table.CODES``)."""

    def __init__(self, code: str, message: str, *, tool: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.tool = tool
        if hint is None:
            from reyn_core.code_table import CODES

            info = CODES.get(code)
            hint = info.hint if info else ""
        self.hint = hint


class PluginLoadError(ReynError):
    """A plugin could not be loaded: ``code`` is the load's diagnostic code (``RI001``…, ``RC001``…),
    ``hint`` what to do, ``traceback`` the import's when the plugin's own code raised there."""

    def __init__(self, code: str, message: str, *, hint: str = "", traceback: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint
        self.traceback = traceback


class RegistryFrozen(ReynError):
    """The registry is a frozen snapshot; build a new one instead of mutating it."""


class PhaseOutputError(ReynError):
    """A model's phase output is not valid JSON or breaks the output contract.

    ``problems`` carries one entry per violation, each with a JSON pointer into the output.
    """

    def __init__(self, message: str, problems: Sequence[ArgumentProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)

    def feedback(self) -> str:
        """The exact errors, written to be sent back to the model once."""
        lines = [self.message, *(f"- {p.render()}" for p in self.problems)]
        return "\n".join(lines)


class StrictSchemaError(ReynError):
    """A tool's schema cannot be expressed in OpenAI strict mode; the message says why."""

    def __init__(self, tool: str, reason: str) -> None:
        super().__init__(f"tool {tool!r} cannot be rendered in strict mode: {reason}")
        self.tool = tool
        self.reason = reason


# --------------------------------------------------------------------------- rendering, profiles, model calls


class StrictRenderError(ReynError):
    """Some tools cannot be rendered in OpenAI strict mode. ``errors`` says why for each;
    ``rendered`` is the array with those tools left non-strict, for callers that accept that."""

    def __init__(self, errors: list[StrictSchemaError], rendered: list[dict[str, Any]]) -> None:
        lines = "; ".join(str(e) for e in errors)
        super().__init__(f"{len(errors)} tool(s) cannot be strict: {lines}")
        self.errors = errors
        self.rendered = rendered


class ProfileError(ReynError):
    """The profile cannot be used: unreadable file, invalid TOML, unknown key, wrong type, unknown
    named profile. ``key`` is the dotted key path (when there is one) and ``file`` the file."""

    code = "RC003"

    def __init__(self, message: str, *, key: str | None = None, file: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.file = file


class NotUtf8Json(ReynError, ValueError):
    """Bytes offered as JSON that a parser would not read as UTF-8 (``jsondata.json_values``): JSON in
    UTF-16 or UTF-32 (``json.loads`` of bytes detects both, so a count of their bytes as UTF-8 would
    disagree with what it parses), a byte no UTF-8 JSON text starts with, or a UTF-8 byte order mark.
    RFC 8259: JSON exchanged between systems is UTF-8, sent without one. The message completes "the
    body is …"; ``what`` is its first part (``"JSON in UTF-16-LE"``)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what}; only UTF-8 JSON without a byte order mark is accepted (RFC 8259)")
        self.what = what


class NotJsonNumber(ReynError, ValueError):
    """A number in a JSON text that no JSON can carry onward (``jsondata.parse_json``): ``NaN``,
    ``Infinity`` or ``-Infinity`` (RFC 8259 has none, though ``json.loads`` reads them by default),
    or a literal beyond a 64-bit float's range (``1e400``, which ``json.loads`` reads as Infinity).
    ``literal`` is the number as written (at most its first 40 characters)."""

    def __init__(self, literal: str) -> None:
        shown = literal if len(literal) <= 40 else f"{literal[:40]}…"
        why = (
            "is not JSON (NaN, Infinity)"
            if literal in _NON_FINITE
            else "is beyond a 64-bit float's range (it would read as Infinity, which is not JSON)"
        )
        super().__init__(f"{shown} {why}; send a number or null")
        self.literal = shown


_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})


class TooManyJsonValues(ReynError, ValueError):
    """A peer's JSON text holding more than ``limit`` JSON values (``jsondata.read_json``), refused
    before it is parsed: parsing costs per value, not per byte. ``limit`` is the bound it exceeded."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the JSON text holds more than {limit} JSON values (the limit); it was not parsed")
        self.limit = limit


def exception_message(exc: BaseException, limit: int = 300) -> str:
    """The first line of an exception's message, at most ``limit`` characters ("(no message)" when
    empty). Never raises, even for an exception whose ``__str__`` breaks."""
    try:
        text = str(exc).strip()
    except Exception:
        text = ""
    return text.splitlines()[0][:limit] if text else "(no message)"


def describe_exception(exc: BaseException, limit: int = 500) -> str:
    """``Type: first line of the message`` (just ``Type`` without a message): how every error a
    model or a user reads names an exception — one line, never a traceback."""
    message = exception_message(exc, limit)
    return type(exc).__name__ if message == "(no message)" else f"{type(exc).__name__}: {message}"


# The LLM errors moved to the reyn-loops distribution (reyn_loops.errors): naming one here says where.
__getattr__ = moved_attributes(__name__)
