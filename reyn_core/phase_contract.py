"""The phase output contract: the ONE JSON object a model returns from a phase step.

::

    {"control": {"type": "transition|finish|abort", "decision": "continue|finish|abort",
                 "next_phase": "<name> or null", "confidence": 0.0, "reason": {}},
     "artifact": {"type": "<schema_name>", "data": {}},
     "control_ir": [{"kind": "<tool name>", "...": "arguments, flat"}]}

``parse_phase_output`` checks a reply against a rendered ``PhaseSurface`` and returns a
``PhaseOutput`` or raises ``PhaseOutputError`` with one JSON pointer per problem.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import ArgumentProblem, PhaseOutputError, exception_message
from .validation import depth_within, problems_from_pydantic

if TYPE_CHECKING:
    from .render.phase import PhaseSurface

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


_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)


MAX_OUTPUT_DEPTH = 64
_TOO_DEEP = object()


def _load(raw: str | bytes | Mapping[str, Any]) -> Any:
    if isinstance(raw, Mapping):
        data: Any = dict(raw)
    else:
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        fenced = _FENCE.match(text)
        if fenced:  # models often wrap the object in one ```json fence; nothing else is forgiven
            text = fenced.group(1)
        try:
            data = json.loads(text)
        except RecursionError:
            data = _TOO_DEEP
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


def parse_phase_output(raw: str | bytes | Mapping[str, Any], surface: PhaseSurface) -> PhaseOutput:
    """Parse and check a model's phase reply against ``surface`` (its allowed ops and their schemas).

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
            problems.extend(problems_from_pydantic(exc, "/control"))
    if data.get("artifact") is not None:
        try:
            artifact = PhaseArtifact.model_validate(data["artifact"])
        except ValidationError as exc:
            problems.extend(problems_from_pydantic(exc, "/artifact"))
    ops: list[PhaseOpCall] = []
    items = data.get("control_ir", [])
    if items is None:
        items = []
    if not isinstance(items, list):
        problems.append(ArgumentProblem("/control_ir", "must be a list of ops"))
        items = []
    for i, item in enumerate(items):
        op, item_problems = surface.check_op(item, f"/control_ir/{i}")
        problems.extend(item_problems)
        if op is not None:
            ops.append(op)
    if problems:
        raise PhaseOutputError(
            f"the reply breaks the phase output contract ({len(problems)} problem(s))", problems
        )
    assert control is not None
    return PhaseOutput(control=control, artifact=artifact, control_ir=ops)
