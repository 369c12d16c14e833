"""``RouterLoop``: native function calling over litellm, one registry, one dispatcher.

Each turn renders the tools array with ``render_router`` (the gates decide what the model sees),
calls the model, runs the turn's tool calls through ``dispatch_batch`` (reads concurrently, writes
as ordered barriers; the gates are checked again), and appends one ``tool`` message per call built
from the dispatcher's envelope — so an unknown tool, a refused tool or bad arguments reach the
model as an error it can correct. The loop stops at a text answer, at a deferred tool
(``status="pending"``, resumable with the tool's result), at a call waiting for approval
(``status="pending"``, resumable once it is decided — in this process or another: the request is
durable, ``RouterResult.as_json`` carries the run), or at the turn limit.

With a ``deferral`` policy (``[surfaces.router.defer]``, see ``reyn_core.deferral``) each turn's array
is ``ToolDeferral.split``: deferred tools are left out, the search tool is offered, and tools
found (named in a search result or called) earlier in the conversation are added from the next turn.
Every call — the search tool's and a deferred tool called by name — goes through the same dispatcher.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from reyn_core import ReynError, RouterCallerState, ToolContext
from reyn_core.host import (
    DeferralPolicy,
    ToolDeferral,
    ToolRegistry,
    dispatch_batch,
    found_tool_names,
    render_router,
    target_for_model,
    tool_call_id,
)
from reyn_loops.events import EventCallback, dispatch_with_reports, emit
from reyn_loops.llm import LLMCallError, LLMClient, LLMRequest, ModelLoop, ToolCallRequest, at_least_one
from reyn_loops.tracing import chat_turn

RouterStatus = Literal["done", "pending", "turn_limit"]


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call the loop ran: the model's call and the dispatcher's envelope."""

    id: str
    name: str
    arguments: str
    envelope: Mapping[str, Any]
    turn: int


@dataclass(frozen=True)
class PendingToolCall:
    """A call the run stopped at. ``waits`` is ``deferred`` (the host must finish it: ``accepted`` is
    what its handler returned), ``approval`` (nothing ran; ``approval`` is the request to decide) or
    ``held`` (after a side-effecting call waiting for approval: not started, run on resume)."""

    id: str
    name: str
    arguments: str
    accepted: Any = None
    waits: Literal["deferred", "approval", "held"] = "deferred"
    approval: str | None = None


@dataclass(frozen=True)
class RouterResult:
    """How a run ended. ``messages`` is the whole conversation (the caller's list is never mutated).

    ``status`` is ``done`` (``text`` holds the answer), ``pending`` (``pending`` lists deferred calls;
    pass their results to ``RouterLoop.resume``) or ``turn_limit``.
    """

    status: RouterStatus
    messages: list[dict[str, Any]]
    text: str | None = None
    turns: int = 0
    pending: tuple[PendingToolCall, ...] = ()
    tool_calls: tuple[ToolCallRecord, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        """The run as JSON data, to resume it in another process (``from_json``)."""
        return {
            "status": self.status,
            "messages": self.messages,
            "text": self.text,
            "turns": self.turns,
            "pending": [vars(p) for p in self.pending],
            "tool_calls": [vars(r) for r in self.tool_calls],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RouterResult:
        """A run saved with ``as_json``."""
        return cls(
            data["status"],
            list(data["messages"]),
            data.get("text"),
            int(data.get("turns", 0)),
            tuple(PendingToolCall(**p) for p in data.get("pending", ())),
            tuple(ToolCallRecord(**r) for r in data.get("tool_calls", ())),
        )


def tool_message(call_id: str, envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The ``tool`` message for one call: the dispatcher's envelope as compact JSON.

    ``host_hint`` (the operator's explanation of a ``not_found``: plugin ids, statuses, diagnostic
    codes) is dropped, even from an envelope a host supplies itself: a model is told only that the
    tool is not available."""
    shown = {k: v for k, v in envelope.items() if k != "host_hint"}
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": json.dumps(shown, ensure_ascii=False, separators=(",", ":")),
    }


class RouterLoop(ModelLoop):
    """A chat loop with native tool calling.

    ``ctx`` is the caller's context (agent, workspace, bridges); the loop sets its surface to
    ``router`` and its ``router_state``. ``client`` defaults to ``LiteLLMClient()`` (litellm, extra
    ``[llm]``); tests and the demo pass a ``ReplayClient`` or a client aimed at a local server.
    ``exclude`` hides tools for this loop; ``plan_mode`` marks a plan step (the gates then hide the
    tools whose authors deny plan mode); ``allowed_tools`` narrows the loop to a plan step's tool
    list. ``stream`` streams text to ``on_event`` as ``text_delta`` events. ``deferral`` (a
    ``DeferralPolicy``, e.g. ``reyn_core.host.load(profile).deferral``) defers tools and
    offers the search tool, one of the registry's tools (the search pack's ``find_tools``).
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        model: str,
        ctx: ToolContext | None = None,
        client: LLMClient | None = None,
        max_turns: int = 8,
        stream: bool = False,
        exclude: Iterable[str] = (),
        plan_mode: bool = False,
        allowed_tools: Iterable[str] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        strict: bool = False,
        system_prompt: str | None = None,
        on_event: EventCallback | None = None,
        deferral: DeferralPolicy | None = None,
    ) -> None:
        super().__init__(registry, model=model, client=client, on_event=on_event)
        self.max_turns = at_least_one("max_turns", max_turns)
        self.stream = stream
        self.plan_mode = plan_mode
        self.exclude = frozenset(exclude)
        self.allowed_tools = frozenset(allowed_tools) if allowed_tools is not None else None
        self.tool_choice = tool_choice
        self.strict = strict
        self.system_prompt = system_prompt
        self.deferral = deferral
        self._deferral = (
            ToolDeferral(registry, deferral) if deferral is not None and deferral.active else None
        )
        base = ctx or ToolContext(surface="router")
        state = base.router_state or RouterCallerState()
        allowed = self.allowed_tools if self.allowed_tools is not None else state.allowed_tools
        # Tools that read the registry they are served from (the search pack's find_tools) find it
        # where every host passes it; a host that passed its own keeps it.
        extras = base.extras if "registry" in base.extras else {**base.extras, "registry": registry}
        self.ctx = replace(
            base,
            surface="router",
            extras=extras,
            entry=base.entry or "router",  # an approval's key tells this loop from `mcp serve`
            router_state=replace(
                state,
                exclude=state.exclude | self.exclude,
                allowed_tools=allowed,
                plan_mode=plan_mode or state.plan_mode,
            ),
        )

    def plan_step(self, tools: Iterable[str]) -> RouterLoop:
        """A plan-mode loop narrowed to one step's tool list (the tools denying plan mode stay hidden)."""
        loop = RouterLoop(
            self.registry,
            model=self.model,
            ctx=replace(self.ctx, router_state=None),
            client=self._client,
            max_turns=self.max_turns,
            stream=self.stream,
            exclude=self.exclude,
            plan_mode=True,
            allowed_tools=tools,
            tool_choice=self.tool_choice,
            strict=self.strict,
            system_prompt=self.system_prompt,
            on_event=self.on_event,
            deferral=self.deferral,
        )
        return loop

    @property
    def dispatch_registry(self) -> ToolRegistry:
        """What calls are dispatched against: the registry (the search tool is one of its tools)."""
        return self._deferral.registry if self._deferral is not None else self.registry

    def tools(
        self, turn: int | None = None, messages: Sequence[Mapping[str, Any]] = ()
    ) -> list[dict[str, Any]]:
        """The tools array this loop sends (what ``render_router`` gives for its context; under
        deferral, ``ToolDeferral.split`` with the tools ``messages`` have found)."""
        ctx = self._turn_ctx(turn)
        # Each tool's schema adapted for this model's provider (issue 28: gemini inlines $ref, ...).
        target = target_for_model(self.model, strict=self.strict)
        if self._deferral is None:
            return render_router(self.registry, ctx, exclude=self.exclude, strict=self.strict, target=target)
        found = found_tool_names(messages, self._deferral.policy.search_tool)
        return self._deferral.split(ctx, found, exclude=self.exclude, strict=self.strict, target=target).tools

    def _turn_ctx(self, turn: int | None) -> ToolContext:
        state = self.ctx.router_state or RouterCallerState()
        return replace(self.ctx, router_state=replace(state, turn=turn))

    # ------------------------------------------------------------------ running

    async def run(self, messages: Sequence[Mapping[str, Any]] | str) -> RouterResult:
        """Run the conversation until a text answer, a deferred tool or the turn limit."""
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        msgs = [dict(m) for m in messages]
        if self.system_prompt and not any(m.get("role") == "system" for m in msgs):
            msgs.insert(0, {"role": "system", "content": self.system_prompt})
        return await self._loop(msgs, first_turn=1, records=[])

    async def resume(self, result: RouterResult, results: Mapping[str, Any]) -> RouterResult:
        """Continue a ``pending`` run with the deferred calls' results (tool-call id → result).

        A result may be any JSON-safe value (sent as ``{"status": "ok", "data": value}``) or a full
        dispatcher envelope (``{"status": "error", "error": {...}}`` to report a failure).
        """
        if result.status != "pending":
            raise ReynError(f"only a pending run can be resumed (this one is {result.status!r})")
        if any(p.waits != "deferred" for p in result.pending):
            return await self._resume_approved(result)
        missing = [p for p in result.pending if p.id not in results]
        if missing:
            named = ", ".join(f"{p.id} ({p.name})" for p in missing)
            raise ReynError(f"resume needs a result for every pending call; missing: {named}")
        msgs = [dict(m) for m in result.messages]
        for p in result.pending:
            value = results[p.id]
            is_envelope = isinstance(value, Mapping) and value.get("status") in ("ok", "error")
            envelope = dict(value) if is_envelope else {"status": "ok", "data": value}
            msgs.append(tool_message(p.id, envelope))
        return await self._loop(msgs, first_turn=result.turns + 1, records=list(result.tool_calls))

    async def _resume_approved(self, result: RouterResult) -> RouterResult:
        """Run again the calls that waited for approval (and those held behind them), in order: each
        runs only by consuming its approval; one still undecided leaves the run pending."""
        msgs = [dict(m) for m in result.messages]
        records = list(result.tool_calls)
        ctx = self._turn_ctx(result.turns)
        waiting = [p for p in result.pending if p.waits != "deferred"]
        calls = [ToolCallRequest(p.id, p.name, p.arguments) for p in waiting]
        approvals = {p.id: p.approval for p in waiting}
        envelopes = await self._dispatch_all(calls, ctx, approvals)
        pending = self._take_turn(calls, envelopes, msgs, records, result.turns)
        deferred = tuple(p for p in result.pending if p.waits == "deferred")
        if pending or deferred:
            return RouterResult(
                "pending", msgs, result.text, result.turns, deferred + pending, tuple(records)
            )
        return await self._loop(msgs, first_turn=result.turns + 1, records=records)

    async def _loop(
        self, msgs: list[dict[str, Any]], *, first_turn: int, records: list[ToolCallRecord]
    ) -> RouterResult:
        last = first_turn + self.max_turns - 1
        turn = first_turn - 1
        for turn in range(first_turn, last + 1):
            ctx = self._turn_ctx(turn)
            tools = self.tools(turn, msgs)
            with chat_turn(self.model) as chat:  # the turn's span: the model call and its tool calls
                emit(self.on_event, "model_call", turn=turn, model=self.model, tools=len(tools))
                request = LLMRequest(
                    self.model,
                    list(msgs),
                    tools or None,
                    self.tool_choice if tools else None,
                    stream=self.stream,
                )
                on_delta = (
                    (lambda piece: emit(self.on_event, "text_delta", text=piece)) if self.stream else None
                )
                try:
                    reply = await self.client.complete(request, on_delta=on_delta)
                except LLMCallError as exc:
                    exc.messages = list(msgs)  # complete up to the failed call: safe to retry from
                    raise
                chat.reply(reply.usage, reply.finish_reason)
                calls = reply.tool_calls
                emit(
                    self.on_event, "assistant", turn=turn, text=reply.text, tool_calls=[c.name for c in calls]
                )
                msgs.append(dict(reply.message))
                if not calls:
                    return RouterResult("done", msgs, reply.text, turn, (), tuple(records))
                envelopes = await self._dispatch_all(calls, ctx, {})
                pending = self._take_turn(calls, envelopes, msgs, records, turn)
                if pending:
                    emit(self.on_event, "pending", turn=turn, calls=[p.name for p in pending])
                    return RouterResult("pending", msgs, reply.text, turn, tuple(pending), tuple(records))
        emit(self.on_event, "turn_limit", turns=self.max_turns)
        return RouterResult("turn_limit", msgs, None, turn, (), tuple(records))

    def _take_turn(
        self,
        calls: Sequence[ToolCallRequest],
        envelopes: Sequence[dict[str, Any]],
        msgs: list[dict[str, Any]],
        records: list[ToolCallRecord],
        turn: int,
    ) -> tuple[PendingToolCall, ...]:
        """Record each call; answer it with a tool message, or keep it pending (deferred, waiting for
        approval, or held behind a call that waits)."""
        pending = []
        held = False
        for call, envelope in zip(calls, envelopes, strict=True):
            records.append(ToolCallRecord(call.id, call.name, call.arguments, envelope, turn))
            kind = (envelope.get("error") or {}).get("kind")
            if envelope.get("status") == "ok" and self._is_deferred(call.name):
                pending.append(PendingToolCall(call.id, call.name, call.arguments, envelope.get("data")))
            elif kind == "approval_required":
                held = True
                approval = envelope["error"].get("approval")
                pending.append(
                    PendingToolCall(call.id, call.name, call.arguments, None, "approval", approval)
                )
            elif kind == "not_run" and held:
                pending.append(PendingToolCall(call.id, call.name, call.arguments, None, "held"))
            else:
                msgs.append(tool_message(call.id, envelope))
        return tuple(pending)

    async def _dispatch_all(
        self, calls: Sequence[ToolCallRequest], ctx: ToolContext, approvals: Mapping[str, str | None]
    ) -> list[dict[str, Any]]:
        """The turn's calls in purity order (``dispatch_batch``), each with its events and span id."""

        async def one(index: int, name: str, args: Any) -> dict[str, Any]:
            return await self._dispatch(calls[index], ctx, approvals.get(calls[index].id))

        batch = [(c.name, c.arguments) for c in calls]
        return await dispatch_batch(self.dispatch_registry, batch, ctx, dispatch=one)

    async def _dispatch(
        self, call: ToolCallRequest, ctx: ToolContext, approval: str | None = None
    ) -> dict[str, Any]:
        emit(self.on_event, "tool_call", id=call.id, name=call.name, arguments=call.arguments)
        with tool_call_id(call.id):  # the execute_tool span's gen_ai.tool.call.id
            envelope = await dispatch_with_reports(
                self.on_event,
                ctx,
                self.dispatch_registry,
                call.name,
                call.arguments,
                ids={"id": call.id},
                surface="router",
                exclude=self.exclude,
                approval=approval,
            )
        emit(self.on_event, "tool_result", id=call.id, name=call.name, envelope=envelope)
        return envelope

    def _is_deferred(self, name: str) -> bool:
        registry = self.dispatch_registry
        return name in registry and registry.get(name).dispatch_kind == "deferred"
