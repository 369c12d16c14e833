"""``PhaseRunner``: one phase of a skill, where the model answers with the phase output contract.

The system prompt carries the op catalogue (``render_phase(...).prompt_text()``) and the output
contract; the request asks for structured output with the contract's JSON Schema when litellm says
the model supports it, JSON mode otherwise. Each reply is checked with ``parse_phase_output``: a reply
that is not JSON or breaks the contract is sent back once with the exact errors, and a second bad
reply in a row aborts the phase cleanly. The ops of a valid reply run in order through the dispatcher
under the phase's ``allowed_ops`` and their results are sent back; the phase ends on a reply without
ops (finish or transition) or on an abort (whose ops are not run). A tool that asks the user (through
the ``ask_user`` bridge) suspends the run: the result carries a ``PhaseState`` to resume with the
answer, in this process or, as JSON, in another. An op waiting for approval suspends the same way,
before anything of it ran (``state.approval`` names the request); resuming runs it only once it is
approved, then the ops after it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from reyn_core import ReynError, ToolContext
from reyn_core.host import (
    PhaseCatalog,
    PhaseOpCall,
    PhaseOutput,
    PhaseOutputError,
    ToolRegistry,
    parse_phase_output,
    phase_context,
    render_phase,
)
from reyn_loops.events import EventCallback, dispatch_with_reports, emit
from reyn_loops.llm import LLMCallError, LLMClient, LLMRequest, ModelLoop, at_least_one
from reyn_loops.phase_result import PhaseResult, PhaseState, PhaseStatus
from reyn_loops.tracing import chat_turn

_CONTRACT = """\
Reply with exactly one JSON object (no prose around it), the phase output contract:
{"control": {"type": "transition|finish|abort", "decision": "continue|finish|abort",
             "next_phase": "<phase name> or null", "confidence": 0.0-1.0, "reason": {}},
 "artifact": {"type": "<artifact type>", "data": {...}},
 "control_ir": [{"kind": "<op>", ...the op's arguments, flat}]}
Rules:
- type "finish" goes with decision "finish"; "abort" with "abort"; "transition" with \
"continue" and a next_phase.
- To act, list ops in control_ir. They run in order and you receive their results; then reply again.
- The phase ends on a reply whose control_ir is empty (finish or transition), or on an abort, whose
  ops are not run. Put the phase's product in artifact."""


class _Asker:
    """The ``ask_user`` bridge the runner supplies when the host has none: it records the question."""

    def __init__(self) -> None:
        self.question: Any = None
        self.asked = False

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.asked = True
        self.question = kwargs.get("question", args[0] if args else kwargs)
        return {"status": "suspended", "note": "the host will resume this phase with the user's answer"}


class PhaseRunner(ModelLoop):
    """Run one phase against a model.

    ``allowed_ops`` None means ``ctx.phase_state.allowed_ops``, else the profile default.
    ``structured`` None asks litellm whether ``model`` supports a JSON-schema ``response_format``;
    True / False force it; ``json_mode=False`` sends no ``response_format`` at all (for endpoints that
    reject it). ``max_steps`` bounds the model calls of one run.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        model: str,
        ctx: ToolContext | None = None,
        allowed_ops: Sequence[str] | None = None,
        client: LLMClient | None = None,
        name: str = "phase",
        instructions: str = "",
        artifact_type: str | None = None,
        next_phases: Sequence[str] = (),
        max_steps: int = 8,
        structured: bool | None = None,
        json_mode: bool = True,
        on_event: EventCallback | None = None,
    ) -> None:
        super().__init__(registry, model=model, client=client, on_event=on_event)
        self.name = name
        self.instructions = instructions
        self.artifact_type = artifact_type
        self.next_phases = tuple(next_phases)
        self.max_steps = at_least_one("max_steps", max_steps)
        self.structured = structured
        self.json_mode = json_mode
        base = ctx or ToolContext(surface="phase")
        if allowed_ops is None:
            if base.phase_state is not None and base.phase_state.allowed_ops is not None:
                allowed_ops = base.phase_state.allowed_ops
            else:
                allowed_ops = registry.operator.default_allowed_ops
        self.allowed_ops: tuple[str, ...] = tuple(allowed_ops)
        self.ctx = phase_context(base, self.allowed_ops)
        self._session = self.ctx.session
        self.surface: PhaseCatalog = render_phase(registry, self.ctx, self.allowed_ops)

    # ------------------------------------------------------------------ prompt

    def system_prompt(self) -> str:
        """The system message: the phase, its instructions, the contract and the op catalogue."""
        parts = [f"You are running the phase {self.name!r}."]
        if self.instructions.strip():
            parts.append(self.instructions.strip())
        parts.append(_CONTRACT)
        if self.artifact_type:
            parts.append(f'The artifact type of this phase is "{self.artifact_type}".')
        if self.next_phases:
            parts.append("Phases you may transition to: " + ", ".join(self.next_phases) + ".")
        parts.append(self.surface.prompt_text())
        if not self._use_structured():
            parts.append(
                "JSON Schema of the reply:\n" + json.dumps(self.surface.output_schema, separators=(",", ":"))
            )
        return "\n\n".join(parts)

    def _use_structured(self) -> bool:
        if self.structured is None:
            from reyn_loops.llm import supports_structured_output

            self.structured = supports_structured_output(self.model)
        return self.structured

    def response_format(self) -> dict[str, Any] | None:
        """``json_schema`` with the output contract where supported, ``json_object`` otherwise."""
        if not self.json_mode:
            return None
        if self._use_structured():
            schema = {k: v for k, v in self.surface.output_schema.items() if k != "$schema"}
            return {
                "type": "json_schema",
                "json_schema": {"name": "phase_output", "schema": schema, "strict": False},
            }
        return {"type": "json_object"}

    # ------------------------------------------------------------------ running

    async def run(self, task: str | Sequence[Mapping[str, Any]]) -> PhaseResult:
        """Run the phase on ``task`` (a user message, or a list of messages without the system one)."""
        user = [{"role": "user", "content": task}] if isinstance(task, str) else [dict(m) for m in task]
        msgs = [{"role": "system", "content": self.system_prompt()}, *user]
        # a run is a session, as a router conversation is: the host's, or its own
        self._session = self.ctx.session or "phase-" + secrets.token_hex(8)
        return await self._loop(msgs, step=0, op_log=[])

    async def resume(self, state: PhaseState, answer: Any) -> PhaseResult:
        """Continue a suspended run with the user's ``answer`` to ``state.question``."""
        if state.phase != self.name or tuple(state.allowed_ops) != self.allowed_ops:
            raise ReynError(
                f"this state belongs to phase {state.phase!r} with allowed_ops {state.allowed_ops}; "
                f"resume it with a runner for that phase (this one: {self.name!r}, {list(self.allowed_ops)})"
            )
        self._session = state.session if state.session is not None else self.ctx.session
        if state.approval is not None:  # the op itself runs now, by its approval (``answer`` unused)
            msgs = [dict(m) for m in state.messages]
            ops = [
                PhaseOpCall(kind=o["kind"], args=_args(o)) for o in (state.pending_op, *state.remaining_ops)
            ]
            results, op_log = [*state.results], [*state.op_log]
            suspended = await self._run_ops(ops, msgs, state.step, results, op_log, approval=state.approval)
            if suspended is not None:
                return suspended
            msgs.append(_results_message(results))
            return await self._loop(msgs, step=state.step, op_log=op_log)
        envelope = {"status": "ok", "data": {"question": state.question, "answer": answer}}
        op_log = [*state.op_log]
        results = [*state.results, {"kind": state.pending_op.get("kind"), "result": envelope}]
        op_log.append(
            {"kind": state.pending_op.get("kind"), "args": _args(state.pending_op), "result": envelope}
        )
        emit(self.on_event, "op_result", op=state.pending_op.get("kind"), envelope=envelope)
        msgs = [dict(m) for m in state.messages]
        remaining = [PhaseOpCall(kind=o["kind"], args=_args(o)) for o in state.remaining_ops]
        suspended = await self._run_ops(remaining, msgs, state.step, results, op_log)
        if suspended is not None:
            return suspended
        msgs.append(_results_message(results))
        return await self._loop(msgs, step=state.step, op_log=op_log)

    async def _loop(
        self, msgs: list[dict[str, Any]], *, step: int, op_log: list[dict[str, Any]]
    ) -> PhaseResult:
        retried = False
        output: PhaseOutput | None = None
        # Why the run aborts when the loop ends without returning (out of steps, or a second bad reply).
        error = f"the phase did not end within {self.max_steps} model calls"
        while step < self.max_steps:
            step += 1
            with chat_turn(self.model) as chat:  # the step's span: the model call and its ops
                emit(self.on_event, "model_call", step=step, model=self.model, phase=self.name)
                request = LLMRequest(self.model, list(msgs), response_format=self.response_format())
                try:
                    reply = await self.client.complete(request)
                except LLMCallError as exc:
                    exc.messages = list(msgs)
                    raise
                chat.reply(reply.usage, reply.finish_reason)
                raw = reply.text or ""
                msgs.append({"role": "assistant", "content": raw})
                feedback: str | None = None
                try:
                    output = parse_phase_output(raw, self.surface)
                    feedback = self._transition_problem(output)
                except PhaseOutputError as exc:
                    feedback = exc.feedback()
                # ``continues``: a valid reply whose ops run before the phase may end (None when rejected).
                continues = (
                    None
                    if feedback is not None or output is None
                    else bool(output.control_ir) and output.control.type != "abort"
                )
                emit(self.on_event, "phase_reply", step=step, raw=raw, continues=continues)
                if feedback is not None:
                    output = None
                    emit(self.on_event, "contract_error", step=step, feedback=feedback, retry=not retried)
                    if retried:
                        error = f"the model broke the phase output contract twice in a row: {feedback}"
                        break
                    retried = True
                    msgs.append(
                        {
                            "role": "user",
                            "content": "Your reply was rejected:\n"
                            + feedback
                            + "\nReply again with one JSON object that follows the contract.",
                        }
                    )
                    continue
                assert output is not None  # parsed, and no feedback
                retried = False
                if output.control.type == "abort" or not output.control_ir:
                    return self._end(output.control.type, output=output, msgs=msgs, op_log=op_log)
                results: list[dict[str, Any]] = []
                suspended = await self._run_ops(list(output.control_ir), msgs, step, results, op_log)
                if suspended is not None:
                    return suspended
                msgs.append(_results_message(results))
        return self._end("abort", output=output, msgs=msgs, op_log=op_log, error=error)

    def _transition_problem(self, output: PhaseOutput) -> str | None:
        """When next phases are declared, a transition must name one of them (else the feedback)."""
        target = output.control.next_phase
        if output.control.type != "transition" or not self.next_phases or target in self.next_phases:
            return None
        return (
            "the reply does not follow the phase output contract:\n"
            f"- /control/next_phase: {target!r} is not a phase this phase may transition to "
            f"(declared: {', '.join(self.next_phases)})"
        )

    async def _run_ops(
        self,
        ops: list[PhaseOpCall],
        msgs: list[dict[str, Any]],
        step: int,
        results: list[dict[str, Any]],
        op_log: list[dict[str, Any]],
        approval: str | None = None,
    ) -> PhaseResult | None:
        """Run ``ops`` in order; on a question or an op waiting for approval, return the suspended
        result (else None). ``approval`` is the request the first op resumes with."""
        for i, op in enumerate(ops):
            asker = _Asker()
            ctx = replace(self.ctx, session=self._session)
            if not ctx.bridge.has("ask_user"):
                ctx = replace(ctx, bridge=replace(ctx.bridge, ask_user=asker))
            emit(self.on_event, "op", op=op.kind, args=op.args)
            envelope = await dispatch_with_reports(
                self.on_event,
                ctx,
                self.registry,
                op.kind,
                op.args,
                ids={"op": op.kind},
                surface="phase",
                allowed_ops=self.allowed_ops,
                approval=approval if i == 0 else None,
            )
            error = envelope.get("error") or {}
            waits = error.get("approval") if error.get("kind") == "approval_required" else None
            if waits is not None or (asker.asked and envelope.get("status") == "ok"):
                question = {"approval": waits, "message": error.get("message")} if waits else asker.question
                state = PhaseState(
                    self.name,
                    list(self.allowed_ops),
                    [dict(m) for m in msgs],
                    step,
                    question,
                    op.to_wire(),
                    list(results),
                    [o.to_wire() for o in ops[i + 1 :]],
                    list(op_log),
                    approval=waits,
                    session=self._session,
                )
                emit(self.on_event, "suspended", question=question)
                return PhaseResult("suspended", None, msgs, op_log, state=state, question=question)
            emit(self.on_event, "op_result", op=op.kind, envelope=envelope)
            results.append({"kind": op.kind, "result": envelope})
            op_log.append({"kind": op.kind, "args": dict(op.args), "result": envelope})
        return None

    def _end(
        self,
        status: PhaseStatus,
        *,
        output: PhaseOutput | None,
        msgs: list[dict[str, Any]],
        op_log: list[dict[str, Any]],
        error: str | None = None,
    ) -> PhaseResult:
        emit(
            self.on_event,
            "phase_end",
            status=status,
            error=error,
            next_phase=output.control.next_phase if output else None,
        )
        return PhaseResult(status, output, msgs, op_log, error=error)


def _args(wire: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in wire.items() if k != "kind"}


def _results_message(results: list[dict[str, Any]]) -> dict[str, Any]:
    text = json.dumps(results, ensure_ascii=False, separators=(",", ":"))
    return {"role": "user", "content": "Results of your ops, in order:\n" + text}
