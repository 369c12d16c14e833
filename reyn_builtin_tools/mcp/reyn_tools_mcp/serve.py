"""``reyn mcp serve``: the verified registry as an MCP server — the third surface.

What is served is exactly what the router surface offers the calling agent: the tool list is
``render_router`` for one ``ToolContext`` (the gates decide), and every ``tools/call`` goes through
``dispatch_tool`` with the same context and exclusions (gates re-checked, argument validation,
policy hooks, timeout, audit log). A Reyn error envelope becomes a result with ``isError: true``;
an unknown tool is the protocol error the MCP specification prescribes (-32602). The registry is
loaded once and frozen, so ``tools/list`` is the same for the whole life of the process.

Deferred tools (``dispatch_kind="deferred"``) and the ``ask_user`` bridge need a person: they are
served through MCP elicitation to clients that declare it, and not listed to the others. A call the
profile's ``[approvals]`` hold is put to the client's user the same way, before anything of it runs
(``serve_approvals``); a client without elicitation gets a refusal naming the policy.

Transports: stdio (``serve_stdio``) and streamable HTTP (``serve_http``), which stop alike
(``serve_stop``). Imports the ``mcp``
SDK: only ``reyn mcp serve`` imports this module.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import itertools
import json
import logging
import secrets
import sys
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from reyn_core import HostBridge, ToolContext, ToolDenied
from reyn_core.host import (
    HandlerThreads,
    ToolRegistry,
    adapt_parameters,
    describe_lone_surrogate,
    dispatch_tool,
    lone_surrogate_at,
    output_schema,
    render_router,
)

from .serve_http_middleware import answer_expected, hold_place
from .serve_reports import reporter_for, set_level
from .serve_tracing import McpSpanAttributes

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

log = logging.getLogger("reyn.mcp.serve")

SERVER_NAME = "reyn"
DEFAULT_AGENT = "mcp"
DEFAULT_MAX_CONCURRENT_CALLS = 64
LISTING_THREADS = 2
"""Threads one server lists its tools in: its own, so a burst of tools/list leaves the default executor."""
DEFAULT_ANSWER_TIMEOUT_S = 600.0
"""How long a call waits for its user's answer (``--answer-timeout``), both ways of asking: a
mid-call ask (elicitation) waits this long, and a 2026-07-28 ``requestState`` (a deferred tool's
result, an approval question) is honoured this long after it was issued."""
MAX_PENDING = 1024
INSTRUCTIONS = (
    "Tools from a Reyn registry. Each call is checked against the operator's gates and the tool's "
    "schema and is written to the audit log; a refused or failed call comes back with isError."
)

# The MCP request a tool call is answering, for the bridges that talk back to the client.
_REQUEST: contextvars.ContextVar[ServerRequestContext[Any, Any] | None] = contextvars.ContextVar(
    "reyn_mcp_request", default=None
)
# How long the call being answered waits for its user (its server's --answer-timeout).
_ANSWER_TIMEOUT: contextvars.ContextVar[float] = contextvars.ContextVar(
    "reyn_mcp_answer_timeout", default=DEFAULT_ANSWER_TIMEOUT_S
)


# --------------------------------------------------------------------------- tool list


def title_for(name: str) -> str:
    """A human title from a tool name: ``read_file`` → ``Read file``, ``demo__echo`` → ``Demo: echo``."""
    words = ": ".join(part.replace("_", " ").replace("-", " ").strip() for part in name.split("__"))
    return words[:1].upper() + words[1:]


def annotations_for(purity: str, title: str) -> types.ToolAnnotations:
    """MCP tool annotations from the definition's ``purity``: ``read_only`` → ``readOnlyHint``,
    ``side_effect`` → ``destructiveHint``, ``external`` → ``openWorldHint`` (each stated either way)."""
    return types.ToolAnnotations(
        title=title,
        read_only_hint=purity == "read_only",
        destructive_hint=purity == "side_effect",
        open_world_hint=purity == "external",
    )


def mcp_tools(registry: ToolRegistry, rendered: Iterable[Mapping[str, Any]]) -> list[types.Tool]:
    """``render_router`` entries as MCP ``Tool``s: name, description and parameters exactly as
    rendered; a tool whose definition has a result schema also gets it as ``outputSchema``
    (``output_schema``: an object root, a non-object result wrapped under ``result``)."""
    out = []
    for entry in rendered:
        function = entry["function"]
        name = function["name"]
        title = title_for(name)
        definition = registry.get(name)
        returns = definition.returns
        out.append(
            types.Tool(
                name=name,
                title=title,
                description=function["description"],
                input_schema=function["parameters"],
                output_schema=output_schema(returns)[0] if returns is not None else None,
                annotations=annotations_for(definition.purity, title),
            )
        )
    return out


# --------------------------------------------------------------------------- results


def result_from_envelope(
    envelope: Mapping[str, Any], returns: Mapping[str, Any] | None = None
) -> types.CallToolResult:
    """A dispatcher envelope as an MCP tool result: text always; an error envelope as ``isError``
    with the envelope's message. ``structuredContent``: for a tool with a result schema
    (``returns``), the result as its ``outputSchema`` says (``{"result": value}`` when wrapped);
    without one, a JSON object result as it is."""
    if envelope.get("status") != "ok":
        error = envelope.get("error") or {}
        message = str(error.get("message") or "the tool call failed")
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
    data = envelope.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    structured = data if isinstance(data, dict) else None
    if returns is not None and output_schema(returns)[1]:
        structured = {"result": data}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


# --------------------------------------------------------------------------- elicitation


def can_elicit(request: ServerRequestContext[Any, Any] | None) -> bool:
    """Whether the client of this request declared (form) elicitation."""
    if request is None:
        return False
    caps = request.session.client_capabilities
    return caps is not None and caps.elicitation is not None


async def elicit(message: str, schema: dict[str, Any], *, tool: str) -> dict[str, Any]:
    """Ask the person behind the MCP client in the middle of a call (a server-to-client
    ``elicitation/create``, protocol versions up to 2025-11-25); ``ToolDenied`` if they decline,
    give no answer within the server's ``--answer-timeout``, or the client cannot be asked mid-call."""
    request = _REQUEST.get()
    if request is None or not can_elicit(request) or not request.session.can_send_request:
        raise ToolDenied(
            f"tool {tool!r} needs to ask the user, and this MCP client cannot be asked "
            "in the middle of a call",
            tool=tool,
        )
    timeout_s = _ANSWER_TIMEOUT.get()
    answer = await answer_within(request, message, schema, timeout_s)
    if answer is None:
        raise ToolDenied(f"the user did not answer for tool {tool!r} within {timeout_s:g} s", tool=tool)
    if answer.action != "accept" or not answer.content:
        raise ToolDenied(f"the user did not answer for tool {tool!r} ({answer.action})", tool=tool)
    missing = [key for key in schema.get("required", ()) if key not in answer.content]
    if missing:
        sent = ", ".join(sorted(str(k) for k in answer.content)[:8])
        raise ToolDenied(
            f"the MCP client's answer for tool {tool!r} lacks {', '.join(map(repr, missing))} "
            f"(the form asked for it; the answer had: {sent})",
            tool=tool,
        )
    refused = answer_not_unicode(answer.content, tool)
    if refused is not None:
        raise ToolDenied(refused, tool=tool)
    return dict(answer.content)


def answer_not_unicode(content: Mapping[str, Any], tool: str) -> str | None:
    """Why a client's answer (an elicitation's ``content``) is refused: it holds text UTF-8 cannot
    carry (JSON's ``"\\ud800"`` decodes to a lone surrogate) — sent on, in a result or a question,
    it would break the session's writer; refused here, that call ends and the session keeps
    serving. None when every string is valid Unicode."""
    found = lone_surrogate_at(content)
    if found is None:
        return None
    return (
        f"the MCP client's answer for tool {tool!r} holds text UTF-8 cannot carry (a lone surrogate) "
        f"{describe_lone_surrogate(found)}; the answer was refused"
    )


async def answer_within(
    request: Any, message: str, schema: dict[str, Any], timeout_s: float
) -> types.ElicitResult | None:
    """The client's answer to one ``elicitation/create``, or None when none came within
    ``timeout_s`` seconds (a client that hung up never answers: the call, which keeps its
    ``--max-connections`` place while it waits, ends then)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await _ask_client(request, message, schema)
    except TimeoutError:
        return None


ASK_ID_PREFIX = "reyn-ask-"
_CALL_KEYS = itertools.count()


async def _ask_client(request: Any, message: str, schema: dict[str, Any]) -> types.ElicitResult:
    """``elicitation/create`` on the call's own stream. Over HTTP it goes out under an id of this
    server's own (unguessable; the SDK's documented ``request_id`` option) that the HTTP layer knows
    is awaited, so the POST carrying the answer passes ``--max-connections`` (``InFlightRequests``):
    the call waiting for it holds a place. Elsewhere (stdio), or should the SDK not offer the request's
    own channel, the SDK's ``elicit_form`` (its answer then counts like any request: fail closed)."""
    expect = answer_expected(request)
    channel: Any = getattr(request.session, "_request_outbound", None)  # the SDK's send_request uses it
    if expect is None or not callable(getattr(channel, "send_raw_request", None)):
        return await request.session.elicit_form(message, schema, related_request_id=request.request_id)
    ask = types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=schema))
    data = ask.model_dump(by_alias=True, mode="json", exclude_none=True)
    request_id = ASK_ID_PREFIX + secrets.token_urlsafe(18)
    answered = expect(request_id)
    try:
        raw = await channel.send_raw_request(data["method"], data.get("params"), {"request_id": request_id})
    finally:
        answered()
    return types.ElicitResult.model_validate(raw, by_name=False)


async def _ask_user(*, question: str, options: list[str], ctx: ToolContext) -> dict[str, Any]:
    answer: dict[str, Any] = {"type": "string", "description": "your answer"}
    if options:
        answer["enum"] = list(options)
    schema = {"type": "object", "properties": {"answer": answer}, "required": ["answer"]}
    return {"answer": (await elicit(question, schema, tool="ask_user"))["answer"]}


def _accepted(kind: str) -> Any:
    """A bridge that accepts deferred work as a record; the person behind the client then answers."""

    async def accept(**kwargs: Any) -> dict[str, Any]:
        kwargs.pop("ctx", None)
        return {"accepted": kind, **kwargs}

    return accept


def _catalog_services() -> dict[type[Any], Any]:
    """The catalog pack's ``CatalogBridge`` when this load loaded that pack: delegations and plans
    are accepted as records, then answered by the client's user like every deferred call.

    Looked up, never imported on its own: only when the loader has imported (and verified) the
    catalog's plugin module does serve import its service module, through the same verified import.
    """
    if "reyn_tools_catalog.plugin" not in sys.modules:
        return {}
    import importlib

    kind = importlib.import_module("reyn_tools_catalog.service").CatalogBridge
    return {kind: kind(send_to_agent=_accepted("send_to_agent"), dispatch_plan=_accepted("dispatch_plan"))}


def elicitation_bridge() -> HostBridge:
    """The bridges of this host: questions and deferred work go to the MCP client's user."""
    return HostBridge(ask_user=_ask_user, services=_catalog_services())


# --------------------------------------------------------------------------- the server


@dataclass
class ServedRegistry:
    """One frozen registry served to MCP clients for one calling context.

    ``ctx`` is the caller every list and call is computed for (agent, workspace); its surface is
    ``router``, because what is served is what the router surface offers. ``max_concurrent_calls``
    bounds the calls running at once (more wait their turn).
    """

    registry: ToolRegistry
    ctx: ToolContext
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    _lister: ThreadPoolExecutor | None = field(default=None, repr=False)
    _deferred: tuple[str, ...] | None = field(default=None, repr=False)
    _slots: asyncio.Semaphore | None = field(default=None, repr=False)
    _pending: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)
    _approval_states: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)
    transport: str = "stdio"
    _sessions: dict[str, None] = field(default_factory=dict, repr=False)  # ordered: oldest first
    _stdio_session: str = field(default_factory=lambda: "stdio-" + secrets.token_hex(8), repr=False)
    _running: int = field(default=0, repr=False)
    _calls: dict[int, tuple[str, HandlerThreads]] = field(default_factory=dict, repr=False)  # running
    _idle: asyncio.Event | None = field(default=None, repr=False)
    _closing: bool = field(default=False, repr=False)
    answer_timeout_s: float = DEFAULT_ANSWER_TIMEOUT_S

    def __post_init__(self) -> None:
        if self.ctx.surface != "router":
            self.ctx = self.ctx.with_surface("router")
        if self.ctx.entry is None:  # an approval's key tells `mcp serve` from the router loop
            self.ctx = replace(self.ctx, entry="mcp")
        if self.max_concurrent_calls < 1:
            raise ValueError("max_concurrent_calls must be at least 1")
        if not 0 < self.answer_timeout_s < float("inf"):
            raise ValueError("answer_timeout_s must be positive")

    @property
    def deferred(self) -> tuple[str, ...]:
        """The registry's deferred tools: listed only to clients that can be asked (whether the
        gates let a listing see them is asked on each ``tools/list``)."""
        if self._deferred is None:
            self._deferred = tuple(t.name for t in self.registry if t.dispatch_kind == "deferred")
        return self._deferred

    def exclude(self, with_elicitation: bool) -> tuple[str, ...]:
        """What this client may not use beyond the gates: deferred tools without elicitation."""
        return () if with_elicitation else self.deferred

    def tools(self, with_elicitation: bool) -> list[types.Tool]:
        """The served list: ``render_router`` for ``ctx``, asked anew on each ``tools/list`` (the
        gates, the tools' own ``available(ctx)`` included, answer for this request)."""
        # The mcp render target: the schema as registered ($schema kept; MCP clients read 2020-12).
        rendered = render_router(
            self.registry, self.ctx, exclude=self.exclude(with_elicitation), target="mcp"
        )
        return mcp_tools(self.registry, rendered)

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        """The served ``inputSchema`` of ``name`` (None when no such tool): the SDK's per-call
        argument lookup, from the registry's registered definition (``tool.parameters``, adapted
        for MCP), not from a listing: no plugin code runs here (no schema enricher), nothing is
        kept, and whether the tool may be called is the dispatcher's gates' answer."""
        if not isinstance(name, str) or name not in self.registry:
            return None
        return adapt_parameters(self.registry.get(name).parameters, "mcp").schema

    async def listed(self, with_elicitation: bool) -> list[types.Tool]:
        """``tools`` for one ``tools/list``, in this server's own listing threads
        (``LISTING_THREADS``): a burst of listings waiting on slow checks queues there, never in
        asyncio's default executor, where the dispatcher runs its calls' steps."""
        if self._lister is None:
            self._lister = ThreadPoolExecutor(LISTING_THREADS, thread_name_prefix="reyn-mcp-list")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._lister, self.tools, with_elicitation)

    async def call(self, name: str, arguments: Mapping[str, Any] | None, request: Any = None) -> Any:
        """One call through ``dispatch_tool``; a deferred call's result is then asked of the user.

        ``request`` is the SDK's request context (None in-process). Returns a ``CallToolResult``, or
        an ``InputRequiredResult`` when a deferred call waits for the user (2026-07-28 clients).
        The tool's progress and log reports go to the client before the result (``serve_reports``).
        """
        if not isinstance(name, str) or name not in self.registry:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {str(name)[:128]}")
        with_elicitation = can_elicit(request)
        deferred = self.registry.get(name).dispatch_kind == "deferred"
        state: Any = getattr(request.params, "get", lambda _k: None)("requestState") if request else None
        approving = with_elicitation and isinstance(state, str) and state in self._approval_states
        if deferred and with_elicitation and state is not None and not approving:
            # the user's answer to a deferred call that already ran: nothing runs for it
            return result_from_envelope(self._answer(name, state, request))
        if self._closing:  # before anything that could run a tool, the approval retry included
            return _error_result(f"the server is shutting down; {name!r} was not called")
        # The call counts as running (the shutdown wait) and, over HTTP, keeps its request's
        # --max-connections place from here until it ends, even if its client hangs up first (the
        # SDK does not cancel it then): its tool's run and every wait for its user's answer. A call
        # its client cancels ends for the SDK at once, but a sync tool's thread runs on: the call
        # ends when that thread does (HandlerThreads), and only then gives its place back.
        threads = HandlerThreads()
        call = self._started(name, getattr(request, "request_id", None), threads)
        release_place = hold_place(request)
        timeout_token = _ANSWER_TIMEOUT.set(self.answer_timeout_s)  # for every ask of this call
        try:
            with threads.counting():
                if approving:
                    answered = await self._approval_answer(name, arguments, state, request)
                    return result_from_envelope(answered, self.registry.get(name).returns)
                return await self._run(name, arguments, request, with_elicitation, deferred)
        finally:
            _ANSWER_TIMEOUT.reset(timeout_token)
            threads.when_ended(lambda: self._ended(call, release_place))

    def _ended(self, call: int, release_place: Any) -> None:
        """A call ended, its tool's thread included: it no longer runs nor holds its place."""
        self._finished(call)
        if release_place is not None:
            release_place()

    async def _run(
        self, name: str, arguments: Any, request: Any, with_elicitation: bool, deferred: bool
    ) -> Any:
        envelope = await self._dispatch(name, arguments, with_elicitation, request=request)
        if (envelope.get("error") or {}).get("kind") == "approval_required":
            return await self._seek_approval(name, arguments, envelope, request, with_elicitation)
        if envelope.get("status") != "ok" or not deferred:
            return result_from_envelope(envelope, self.registry.get(name).returns)
        return await self._ask_for_result(name, envelope.get("data"), request)

    async def _dispatch(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        with_elicitation: bool,
        approval: str | None = None,
        *,
        request: Any = None,
    ) -> dict[str, Any]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent_calls)
        reporter = reporter_for(request, name)
        session = self.session_of(request)
        if session is not None:
            self._sessions.pop(session, None)  # the most recent last
            self._sessions[session] = None
            while len(self._sessions) > MAX_PENDING:  # bounded: a forgotten one ends at its TTL
                del self._sessions[next(iter(self._sessions))]
        # one copy of the context per call, carrying both (each copy re-runs its checks)
        changes: dict[str, Any] = {
            k: v for k, v in (("reporter", reporter), ("session", session)) if v is not None
        }
        ctx = replace(self.ctx, **changes) if changes else self.ctx
        try:
            slots = self._slots
            await slots.acquire()
            try:
                if self._closing:  # where a tool starts: a stopping server starts none, queued ones too
                    return ToolDenied(
                        f"the server is shutting down; {name!r} was not run", tool=name
                    ).to_envelope()
                return await dispatch_tool(
                    self.registry,
                    name,
                    dict(arguments or {}),
                    ctx,
                    surface="router",
                    exclude=self.exclude(with_elicitation),
                    approval=approval,
                )
            finally:  # the slot is the tool's until its thread ends (a cancelled call's runs on)
                threads = HandlerThreads.current()
                if threads is None:
                    slots.release()
                else:
                    threads.when_ended(slots.release)
        finally:
            if reporter is not None:
                await reporter.drain()

    async def _seek_approval(
        self, name: str, arguments: Any, envelope: dict[str, Any], request: Any, with_elicitation: bool
    ) -> Any:
        """A call the approval policy holds (nothing of it ran): ask the client's user, then run it
        by that approval; a client that cannot be asked is refused, naming the policy."""
        from .serve_approvals import (
            approval_message,
            approve_schema,
            refusal_without_elicitation,
            user_may_decide,
        )

        approval = envelope["error"]["approval"]
        if not with_elicitation:
            return result_from_envelope(refusal_without_elicitation(envelope))
        record = await user_may_decide(self.registry, approval)
        if record is None:
            return result_from_envelope(refusal_without_elicitation(envelope, operator_only=True))
        message = approval_message(record)
        schema = approve_schema(record)
        if request is not None and not request.session.can_send_request:
            # 2026-07-28: no requests to the client mid-call; the client answers and retries.
            token = self._remember(name)
            asked_at = self._pending.pop(token)[1]
            for key in [k for k, (_, t) in self._approval_states.items() if self._expired(t)]:
                del self._approval_states[key]  # never answered: the request ends at its TTL
            while len(self._approval_states) >= MAX_PENDING:  # bounded like the deferred answers
                del self._approval_states[next(iter(self._approval_states))]
            self._approval_states[token] = (approval, asked_at)
            ask = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            return types.InputRequiredResult(input_requests={"approve": ask}, request_state=token)
        answer = await answer_within(request, message, schema, self.answer_timeout_s)
        if answer is None:  # denied: the call waited long enough (its client may have hung up)
            no_answer: dict[str, Any] = {"reason": f"no answer within {self.answer_timeout_s:g} s"}
            answer = types.ElicitResult(action="cancel", content=no_answer)
        decided = await self._decided(name, arguments, approval, answer, request)
        return result_from_envelope(decided, self.registry.get(name).returns)

    async def _approval_answer(self, name: str, arguments: Any, state: str, request: Any) -> dict[str, Any]:
        """The retry (2026-07-28) carrying the user's answer to an approval question."""
        approval, asked_at = self._approval_states.pop(state)
        responses = request.params.get("inputResponses") or {}
        raw = responses.get("approve") if isinstance(responses, Mapping) else None
        answer = types.ElicitResult.model_validate(raw) if isinstance(raw, Mapping) else None
        refused = answer_not_unicode(answer.content or {}, name) if answer is not None else None
        if refused is not None:  # nothing is recorded: the request stays pending
            return ToolDenied(refused, tool=name).to_envelope()
        if self._expired(asked_at):  # denied, as a mid-call ask is: the answer came too late
            late: dict[str, Any] = {"reason": f"no answer within {self.answer_timeout_s:g} s"}
            answer = types.ElicitResult(action="cancel", content=late)
        return await self._decided(name, arguments, approval, answer, request)

    async def _decided(
        self, name: str, arguments: Any, approval: str, answer: Any, request: Any
    ) -> dict[str, Any]:
        from .serve_approvals import record_answer

        if self._closing:  # answered during the shutdown grace: a stopping server starts no tool
            return ToolDenied(f"the server is shutting down; {name!r} was not run", tool=name).to_envelope()
        info = getattr(request.session.client_params, "client_info", None) if request else None
        who = f"mcp client {getattr(info, 'name', '?')}"
        problem = await record_answer(self.registry, approval, answer, who)
        if problem is not None:
            return ToolDenied(problem, tool=name).to_envelope()
        # the same call again, by its request: it runs only if exactly this call was approved
        return await self._dispatch(name, arguments, True, approval, request=request)

    def session_of(self, request: Any) -> str | None:
        """The client session a call belongs to (``ctx.session``): streamable HTTP's session id, or
        this process's one stdio client; None in process (no client) and over HTTP without a
        session (stateless, or the sessionless 2026-07-28 protocol)."""
        if request is None:
            return None
        if self.transport == "stdio":
            return self._stdio_session
        # Only a session the SDK itself checked: a stateful server routes a request by its
        # Mcp-Session-Id to that session's transport (an unknown id gets 404), on the handshake
        # protocol. A stateless server, or the 2026-07-28 protocol, checks no such header: a forged
        # or shared value would name another client's session, so the call has none.
        if self.transport != "http" or not request.session.can_send_request:
            return None
        headers = getattr(getattr(request, "request", None), "headers", None)
        sid = headers.get("mcp-session-id") if headers is not None else None
        return "http-" + sid if isinstance(sid, str) and sid else None

    def end_sessions(self) -> None:
        """The server stops: the approvals scoped to its clients' sessions end with them."""
        gate: Any = self.registry.approvals
        if gate is None:
            return
        for session in list(self._sessions):
            try:
                gate.end_session(session)
            except Exception as exc:  # the store is gone: those approvals still end at their TTL
                # one failure is enough: each further try could wait a connect timeout again
                log.warning(
                    "could not end the approvals of %d session(s), which end at their TTL: %s",
                    len(self._sessions),
                    exc,
                )
                break
            del self._sessions[session]
        self._sessions.clear()

    def _started(self, name: str, request_id: Any, threads: HandlerThreads) -> int:
        key = next(_CALL_KEYS)
        named = name if request_id is None else f"{name} (request id {request_id!r})"
        self._calls[key] = (named, threads)
        self._running += 1
        if self._idle is None:
            self._idle = asyncio.Event()
        self._idle.clear()
        return key

    def _finished(self, call: int) -> None:
        self._calls.pop(call, None)
        self._running -= 1
        if self._running == 0 and self._idle is not None:
            self._idle.set()

    def close(self) -> int:
        """Refuse new calls from now on (shutdown); returns how many calls are still running."""
        self._closing = True
        return self._running

    def still_running(self) -> list[str]:
        """The calls whose tool still runs (in its thread, or an async one that swallowed its
        cancellation), named: what a stop that exits now abandons (``serve_stop``)."""
        return [named for named, threads in self._calls.values() if threads.running]

    def abandoned_calls(self) -> list[Any]:
        """The running calls' handlers still in their threads (``ToolCall``s, as the audit log saw
        them): what a stop that exits now abandons (``serve_stop``)."""
        return [call for _, threads in self._calls.values() for call in threads.abandoned()]

    async def drained(self) -> None:
        """Wait until no call is running."""
        if self._running and self._idle is not None:
            await self._idle.wait()

    def _question(self, name: str, accepted: Any) -> tuple[str, dict[str, Any]]:
        shown = json.dumps(accepted, ensure_ascii=False, indent=2)[:4000]
        message = f"The model called {name!r}; its result has to come from you.\n{shown}"
        schema = {
            "type": "object",
            "properties": {"result": {"type": "string", "description": f"the result of {name}"}},
            "required": ["result"],
        }
        return message, schema

    async def _ask_for_result(self, name: str, accepted: Any, request: Any) -> Any:
        message, schema = self._question(name, accepted)
        if request is not None and not request.session.can_send_request:
            # 2026-07-28: no requests to the client mid-call; the client answers and retries.
            token = self._remember(name)
            ask = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            return types.InputRequiredResult(input_requests={"result": ask}, request_state=token)
        try:
            answer = await elicit(message, schema, tool=name)
        except ToolDenied as exc:
            return result_from_envelope(exc.to_envelope())
        return result_from_envelope({"status": "ok", "data": {"result": answer.get("result")}})

    def _remember(self, name: str) -> str:
        """A one-time token for a deferred call waiting for the user's answer (bounded, expiring)."""
        import secrets
        import time

        now = time.monotonic()
        for key in [k for k, (_, t) in self._pending.items() if self._expired(t)]:
            del self._pending[key]
        while len(self._pending) >= MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        token = secrets.token_urlsafe(24)
        self._pending[token] = (name, now)
        return token

    def _expired(self, asked_at: float) -> bool:
        """Whether an answer to a question asked at ``asked_at`` (``time.monotonic``) comes too late:
        past ``--answer-timeout``, the one deadline of every way of asking."""
        import time

        return time.monotonic() - asked_at > self.answer_timeout_s

    def _answer(self, name: str, state: Any, request: Any) -> dict[str, Any]:
        """The retry of a deferred call carrying the user's answer (``requestState`` + responses)."""
        pending = self._pending.pop(state, None) if isinstance(state, str) else None
        if pending is None or pending[0] != name or self._expired(pending[1]):
            return ToolDenied(
                f"no deferred call of {name!r} is waiting for this answer (unknown or expired requestState)",
                tool=name,
            ).to_envelope()
        responses = request.params.get("inputResponses") or {}
        answer = responses.get("result") if isinstance(responses, Mapping) else None
        content = answer.get("content") if isinstance(answer, Mapping) else None
        if (
            not isinstance(answer, Mapping)
            or answer.get("action") != "accept"
            or not isinstance(content, Mapping)
        ):
            action = answer.get("action") if isinstance(answer, Mapping) else "no answer"
            return ToolDenied(
                f"the user did not answer for tool {name!r} ({action})", tool=name
            ).to_envelope()
        refused = answer_not_unicode(content, name)
        if refused is not None:
            return ToolDenied(refused, tool=name).to_envelope()
        return {"status": "ok", "data": {"result": content.get("result")}}


def build_server(served: ServedRegistry, *, version: str = "") -> Server[Any]:
    """The MCP low-level ``Server`` answering tools/list and tools/call from ``served``."""

    async def on_list_tools(
        request: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # asked per request, off the event loop: the tools' own checks may take their deadline
        tools = await served.listed(can_elicit(request))
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        request: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        token = _REQUEST.set(request)
        try:
            return await served.call(params.name, params.arguments, request)
        except MCPError:
            raise
        except Exception as exc:  # never a traceback to the client; the server log keeps it
            log.exception("tools/call %r failed inside reyn mcp serve", params.name)
            return _error_result(f"tools/call {params.name!r} failed inside the server: {type(exc).__name__}")
        finally:
            _REQUEST.reset(token)

    async def on_set_logging_level(
        request: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        set_level(request, params.level)
        return types.EmptyResult()

    with warnings.catch_warnings():
        # The SDK warns that logging/setLevel is gone from 2026-07-28; clients of the earlier
        # protocol versions still use it (2026-07-28 clients opt in per request instead).
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server: Server[Any] = Server(
            SERVER_NAME,
            version=version,
            instructions=INSTRUCTIONS,
            get_tool_input_schema=served.input_schema,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_set_logging_level=on_set_logging_level,
        )
    # Inside the SDK's own span middleware: adds what its SERVER spans leave out (serve_tracing).
    server.middleware.append(McpSpanAttributes())
    return server


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class ServeOptions:
    """What ``reyn mcp serve`` was asked for (parsed options)."""

    agent: str = DEFAULT_AGENT
    workspace: Path = field(default_factory=Path.cwd)
    profile: str | None = None
    profile_file: str | None = None
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    answer_timeout_s: float = DEFAULT_ANSWER_TIMEOUT_S


def load_served(options: ServeOptions, loaded: Any) -> tuple[ServedRegistry, Any]:
    """Wrap the frozen registry of ``loaded`` (the ``LoadResult`` ``reyn`` handed the command:
    discovery, provenance, ``[lock] enforce``, settings and registration already ran, once) for
    ``options.agent``. Returns it with that ``LoadResult``."""
    result = loaded
    ctx = ToolContext(
        surface="router",
        agent=options.agent,
        workspace=options.workspace,
        bridge=elicitation_bridge(),
        extras={"registry": result.registry, "served_by": "mcp"},
    )
    served = ServedRegistry(
        result.registry, ctx, options.max_concurrent_calls, answer_timeout_s=options.answer_timeout_s
    )
    return served, result


def report_load(served: ServedRegistry, result: Any) -> None:
    """What is served, what was refused, and the deferred tools' condition — on stderr (the log).

    Schema warnings name only tools this server serves; the provider ones (``RS101`` OpenAI strict
    mode, ``RS102`` Gemini) are about rendering for a model provider, not MCP, whose clients get the
    schema as registered, and are left to ``reyn doctor``."""
    names = [t.name for t in served.tools(True)]  # at start-up; each tools/list asks anew
    served_names = set(names)
    for d in result.report.diagnostics:
        if d.code in ("RS101", "RS102") or (d.code.startswith("RS1") and d.tool not in served_names):
            continue
        if d.severity in ("error", "warning"):
            log.warning("%s", d.render())
    refused = [p.plugin_id for p in result.report.plugins if p.enabled and p.status != "loaded"]
    if refused:
        log.warning("not served (plugin %s): see `reyn doctor`", ", ".join(refused))
    log.info("serving %d tools to agent %r: %s", len(names), served.ctx.agent, ", ".join(names) or "(none)")
    if served.deferred:
        log.info(
            "deferred tools %s are listed only to clients that declare elicitation",
            ", ".join(served.deferred),
        )


# --------------------------------------------------------------------------- command


def parser() -> argparse.ArgumentParser:
    """The options of ``reyn mcp serve``."""
    p = argparse.ArgumentParser(
        prog="reyn mcp serve",
        description="Serve the tools the router surface offers an agent to any MCP client: stdio by "
        "default, streamable HTTP at /mcp with --http. Every call goes through Reyn's dispatcher "
        "(gates, argument validation, policy hooks, timeout, audit log).",
    )
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        help=f"the calling agent the gates and per-agent allowlists see (default {DEFAULT_AGENT!r})",
    )
    p.add_argument(
        "--workspace",
        help="workspace root for tools (default: the current directory, unless that is / or your home "
        "directory, where MCP clients start servers: then this option is required)",
    )
    # Read by `reyn` before the command runs: it loads that profile once and hands the result over.
    p.add_argument("--profile", help="named profile to apply ([profiles.<name>]); default $REYN_PROFILE")
    p.add_argument("--profile-file", help="profile TOML file; default $REYN_PROFILE_FILE, ./reyn.toml, ...")
    p.add_argument(
        "--max-concurrent-calls",
        type=int,
        default=DEFAULT_MAX_CONCURRENT_CALLS,
        help=f"tool calls running at once; more wait (default {DEFAULT_MAX_CONCURRENT_CALLS})",
    )
    p.add_argument(
        "--answer-timeout",
        type=float,
        default=DEFAULT_ANSWER_TIMEOUT_S,
        metavar="SECONDS",
        help="how long a call waits for its user's answer (elicitation), and how long a 2026-07-28 "
        f"requestState is honoured; then it is denied (default {DEFAULT_ANSWER_TIMEOUT_S:g})",
    )
    from .serve_http import add_http_options
    from .serve_stop import add_stop_options

    add_stop_options(p)
    add_http_options(p)
    return p


def main(argv: list[str], loaded: Any) -> int:
    """Entry point of ``reyn mcp serve`` with the ``LoadResult`` ``reyn`` handed the command. Returns
    2 on usage or load errors; once serving, the process exits when the stop ends (``serve_stop``):
    0 after a clean stop, ``EXIT_ABANDONED`` after abandoning calls."""
    from reyn_core import ReynError

    from .serve_http import MIN_REQUEST_BYTES, MIN_REQUEST_VALUES, HttpOptionsError, http_options, serve_http
    from .serve_stop import grace_problem

    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="reyn mcp serve: %(message)s", stream=sys.stderr)
    if args.max_concurrent_calls < 1:
        print("reyn mcp serve: error: --max-concurrent-calls must be at least 1", file=sys.stderr)
        return 2
    if not 0 < args.answer_timeout < float("inf"):  # also refuses nan: every wait ends
        print(
            "reyn mcp serve: error: --answer-timeout must be a finite positive number of seconds",
            file=sys.stderr,
        )
        return 2
    if (problem := grace_problem(args.shutdown_grace)) is not None:
        print(f"reyn mcp serve: error: {problem}", file=sys.stderr)
        return 2
    for option, value, least in (
        ("--max-request-bytes", args.max_request_bytes, MIN_REQUEST_BYTES),
        ("--max-request-values", args.max_request_values, MIN_REQUEST_VALUES),
    ):
        if value < least:
            print(f"reyn mcp serve: error: {option} must be at least {least}", file=sys.stderr)
            return 2
    from reyn_core.host import choose_workspace

    try:
        workspace = choose_workspace(args.workspace)
        load_ws = getattr(loaded, "workspace", "")
        if load_ws and workspace != Path(load_ws):  # fail closed: the tools work where the load protects
            raise ReynError(f"the tools' workspace {workspace} is not the load's {load_ws}")
    except ReynError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    try:
        http = http_options(args) if args.http else None
    except HttpOptionsError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    options = ServeOptions(
        agent=args.agent,
        workspace=workspace,
        profile=args.profile,
        profile_file=args.profile_file,
        max_concurrent_calls=args.max_concurrent_calls,
        answer_timeout_s=args.answer_timeout,
    )
    try:
        served, result = load_served(options, loaded)
    except ReynError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    report_load(served, result)
    server = build_server(served, version=_version())
    if http is not None:
        return serve_http(server, served, http)
    from .serve_stdio import serve_stdio
    from .serve_stop import run_until_stopped

    async def serving() -> int:
        await serve_stdio(
            server, served, args.shutdown_grace, args.max_request_bytes, args.max_request_values
        )
        return 0

    run_until_stopped(served, serving())  # exits: 0 after a clean stop, 3 after abandoning calls


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("reyn-tools-mcp")
    except Exception:
        return ""


__all__ = [
    "ServeOptions",
    "ServedRegistry",
    "annotations_for",
    "build_server",
    "load_served",
    "main",
    "mcp_tools",
    "result_from_envelope",
    "title_for",
]
