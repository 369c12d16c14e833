"""The phase output contract: the ONE JSON object a model returns from a phase step.

::

    {"control": {"type": "transition|finish|abort", "decision": "continue|finish|abort",
                 "next_phase": "<name> or null", "confidence": 0.0, "reason": {}},
     "artifact": {"type": "<schema_name>", "data": {}},
     "control_ir": [{"kind": "<tool name>", "...": "arguments, flat"}]}

``parse_phase_output`` checks a reply against a rendered ``PhaseCatalog`` and returns a
``PhaseOutput`` or raises ``PhaseOutputError`` with one JSON pointer per problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from reyn_core.errors import ArgumentProblem, NotJsonNumber, PhaseOutputError, exception_message
from reyn_core.jsondata import depth_within, parse_json, values_within
from reyn_core.validation import problems_from_pydantic
from reyn_core.validation.arguments import MAX_ARGUMENT_VALUES

_DECISION_FOR = {"transition": "continue", "finish": "finish", "abort": "abort"}


class PhaseControl(BaseModel):
    """What the phase does next."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["transition", "finish", "abort"]
    decision: Literal["continue", "finish", "abort"]
    next_phase: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    reason: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> PhaseControl:
        if _DECISION_FOR[self.type] != self.decision:
            raise ValueError(
                f"control.type {self.type!r} goes with decision {_DECISION_FOR[self.type]!r}, "
                f"not {self.decision!r}"
            )
        if self.type == "transition" and not self.next_phase:
            raise ValueError("a transition needs next_phase")
        return self


class PhaseArtifact(BaseModel):
    """The phase's product: a named schema and its data."""

    model_config = ConfigDict(extra="forbid")

    type: str
    data: dict[str, Any] = Field(default_factory=dict)


class PhaseOpCall(BaseModel):
    """One op from ``control_ir``: the tool name and its (flat) arguments."""

    model_config = ConfigDict(frozen=True)

    kind: str
    args: dict[str, Any] = Field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The flat form the model writes: ``{"kind": ..., **args}``."""
        return {"kind": self.kind, **self.args}


class PhaseOutput(BaseModel):
    """A validated phase output."""

    control: PhaseControl
    artifact: PhaseArtifact | None = None
    control_ir: list[PhaseOpCall] = Field(default_factory=list)


_TICKS = "```"


def unfence(text: str) -> str | None:
    """The JSON inside one markdown fence wrapping the whole reply, or None when it is not so wrapped.

    Models often reply `` ```json\\n{...}\\n``` ``; only that is forgiven. The rule (formerly a regex,
    ``^\\s*```(?:json)?\\s*\\n(.*)\\n\\s*```\\s*$`` with DOTALL, cubic on a fence line followed by
    thousands of newlines) is applied by scanning: optional whitespace, three backticks, an optional
    ``json``, whitespace ending in a newline, the content, a newline, whitespace, three backticks and
    trailing whitespace. Of several ways to split, the opening whitespace takes as much as it can and
    the content takes the rest, exactly as the regex chose. Linear in the length of the reply.
    """
    stripped_end = len(text.rstrip())
    begin = len(text) - len(text.lstrip())
    if not text.startswith(_TICKS, begin) or stripped_end - len(_TICKS) < begin:
        return None
    after_open = begin + len(_TICKS)
    if text.startswith("json", after_open):
        after_open += len("json")
    close = stripped_end - len(_TICKS)
    if close < after_open or not text.startswith(_TICKS, close):
        return None
    # the content ends at the last newline of the whitespace run before the closing backticks
    run_start = len(text[:close].rstrip())
    content_end = text.rfind("\n", max(run_start, after_open), close)
    if content_end == -1:
        return None
    # the opening whitespace: the run after the backticks, up to its last newline before content_end
    open_run_end = len(text) - len(text[after_open:].lstrip())
    content_start = text.rfind("\n", after_open, min(open_run_end, content_end))
    if content_start == -1:
        return None
    return text[content_start + 1 : content_end]


MAX_OUTPUT_DEPTH = 64
MAX_OUTPUT_VALUES = MAX_ARGUMENT_VALUES
"""JSON values of a reply's text, counted before it is parsed (``jsondata.values_within``; parsing
costs per value): as many as one call's arguments' text may hold."""
_TOO_DEEP = object()


def _load(raw: str | bytes | Mapping[str, Any]) -> Any:
    if isinstance(raw, Mapping):
        data: Any = dict(raw)
    else:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        fenced = unfence(text)
        if fenced is not None:  # models often wrap the object in one ```json fence; nothing else is forgiven
            text = fenced
        if not values_within(text, MAX_OUTPUT_VALUES):
            raise PhaseOutputError(
                f"the reply holds more than {MAX_OUTPUT_VALUES} JSON values; "
                "reply with one smaller JSON object"
            )
        try:
            data = parse_json(text)
        except RecursionError:
            data = _TOO_DEEP
        except NotJsonNumber as exc:
            raise PhaseOutputError(f"the reply holds a number JSON cannot carry: {exc.message}") from None
        except json.JSONDecodeError as exc:
            raise PhaseOutputError(
                f"the reply is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                "reply with exactly one JSON object"
            ) from None
        except ValueError as exc:  # e.g. an integer longer than Python's int parsing limit
            raise PhaseOutputError(
                f"the reply cannot be read ({exception_message(exc)}); reply with smaller values"
            ) from None
    if data is _TOO_DEEP or not depth_within(data, MAX_OUTPUT_DEPTH):
        raise PhaseOutputError(
            f"the reply nests too deeply (the limit is {MAX_OUTPUT_DEPTH} levels); "
            "reply with one flat JSON object"
        )
    return data


class OpChecker(Protocol):
    """What parsing needs of a rendered catalogue (``PhaseCatalog``): checking one ``control_ir`` item."""

    def check_op(self, item: Any, ptr: str) -> tuple[PhaseOpCall | None, list[ArgumentProblem]]:
        """The op call ``item`` names, or the problems with it (JSON pointers under ``ptr``)."""
        ...


def parse_phase_output(raw: str | bytes | Mapping[str, Any], catalog: OpChecker) -> PhaseOutput:
    """Parse and check a model's phase reply against ``catalog`` (its allowed ops and their schemas).

    Raises ``PhaseOutputError`` listing every problem with a JSON pointer, e.g.
    ``/control_ir/0/kind: 'delete_file' is not an allowed op (allowed: read_file, write_file)``.
    """
    data = _load(raw)
    if not isinstance(data, dict):
        raise PhaseOutputError(f"the reply must be a JSON object, got {type(data).__name__}")
    problems: list[ArgumentProblem] = []
    unknown = sorted(set(data) - {"control", "artifact", "control_ir"})
    problems.extend(
        ArgumentProblem(f"/{k}", "unexpected key (allowed: control, artifact, control_ir)") for k in unknown
    )
    control = artifact = None
    if "control" not in data:
        problems.append(ArgumentProblem("/control", "is required"))
    else:
        try:
            control = PhaseControl.model_validate(data["control"])
        except ValidationError as exc:
            problems.extend(problems_from_pydantic(exc, prefix="/control"))
    if data.get("artifact") is not None:
        try:
            artifact = PhaseArtifact.model_validate(data["artifact"])
        except ValidationError as exc:
            problems.extend(problems_from_pydantic(exc, prefix="/artifact"))
    ops: list[PhaseOpCall] = []
    items = data.get("control_ir", [])
    if items is None:
        items = []
    if not isinstance(items, list):
        problems.append(ArgumentProblem("/control_ir", "must be a list of ops"))
        items = []
    for i, item in enumerate(items):
        op, item_problems = catalog.check_op(item, f"/control_ir/{i}")
        problems.extend(item_problems)
        if op is not None:
            ops.append(op)
    if problems:
        raise PhaseOutputError(
            f"the reply breaks the phase output contract ({len(problems)} problem(s))", problems
        )
    assert control is not None
    return PhaseOutput(control=control, artifact=artifact, control_ir=ops)
