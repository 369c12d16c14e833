"""How a phase run ends (``PhaseResult``) and how a suspended one is carried to its resumption
(``PhaseState``, JSON-serialisable, so another process can resume it): the values ``PhaseRunner``
returns and takes back."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from reyn_core.host import PhaseOutput, parse_own_json

PhaseStatus = Literal["finish", "transition", "abort", "suspended"]


@dataclass
class PhaseState:
    """A suspended run, JSON-serialisable: the conversation, the op batch in progress and the question.

    ``results`` are the results of the batch's ops already run, ``pending_op`` the op that asked,
    ``remaining_ops`` the ops after it (run on resume).
    """

    phase: str
    allowed_ops: list[str]
    messages: list[dict[str, Any]]
    step: int
    question: Any
    pending_op: dict[str, Any]
    results: list[dict[str, Any]] = field(default_factory=list)
    remaining_ops: list[dict[str, Any]] = field(default_factory=list)
    op_log: list[dict[str, Any]] = field(default_factory=list)
    approval: str | None = None
    """Set when ``pending_op`` waits for approval (nothing of it ran): the request's id."""
    session: str | None = None
    """The run's session (``ToolContext.session``: the host's, else one the run made); resuming
    continues it, so an approval the run asked for is the run's only."""

    def to_json(self) -> str:
        """This state as JSON text."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> PhaseState:
        """Inverse of ``to_json``."""
        return cls(**parse_own_json(text))


@dataclass(frozen=True)
class PhaseResult:
    """How a phase ended.

    ``status``: ``finish`` / ``transition`` (``next_phase`` set) / ``abort`` / ``suspended`` (``state``
    and ``question`` set). ``error`` is set when the runner aborted (a second bad reply, the step
    limit) rather than the model. ``op_results`` lists every op run: kind, args and envelope.
    """

    status: PhaseStatus
    output: PhaseOutput | None
    messages: list[dict[str, Any]]
    op_results: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    state: PhaseState | None = None
    question: Any = None

    @property
    def artifact(self) -> dict[str, Any] | None:
        """The final artifact (``{"type", "data"}``), if the model gave one."""
        if self.output is None or self.output.artifact is None:
            return None
        return self.output.artifact.model_dump()

    @property
    def next_phase(self) -> str | None:
        """The phase to go to after a transition."""
        return self.output.control.next_phase if self.output is not None else None
