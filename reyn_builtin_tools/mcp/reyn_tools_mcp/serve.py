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

Here: ``ServedRegistry``'s listing and call path, and ``build_server``. Beside it: the command
(``serve_command``), what the registry keeps across requests (``serve_sessions``), asking the
client's user (``serve_elicitation``), tools and results as MCP types (``serve_listing``).
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from reyn_core import ToolContext, ToolDenied
from reyn_core.host import HandlerThreads, adapt_parameters, dispatch_tool, render_router

from .serve_elicitation import (
    CALL_ANSWER_TIMEOUT,
    CALL_REQUEST,
    answer_not_unicode,
    answer_within,
    can_elicit,
    elicit,
    result_question,
)
from .serve_http_middleware import hold_place
from .serve_listing import error_result, mcp_tools, result_from_envelope
from .serve_reports import reporter_for, set_level
from .serve_sessions import ServedSessions
from .serve_tracing import McpSpanAttributes

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

log = logging.getLogger("reyn.mcp.serve")

SERVER_NAME = "reyn"
DEFAULT_MAX_CONCURRENT_CALLS = 64
LISTING_THREADS = 2
"""Threads one server lists its tools in: its own, so a burst of tools/list leaves the default executor."""
INSTRUCTIONS = (
    "Tools from a Reyn registry. Each call is checked against the operator's gates and the tool's "
    "schema and is written to the audit log; a refused or failed call comes back with isError."
)


@dataclass
class ServedRegistry(ServedSessions):
    """One frozen registry served to MCP clients for one calling context.

    ``ctx`` is the caller every list and call is computed for (agent, workspace); its surface is
    ``router``, because what is served is what the router surface offers. ``max_concurrent_calls``
    bounds the calls running at once (more wait their turn). The registry, the transport and the
    answer timeout are ``ServedSessions``' fields (``serve_sessions``), as is its bookkeeping.
    """

    ctx: ToolContext
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    _lister: ThreadPoolExecutor | None = field(default=None, repr=False)
    _deferred: tuple[str, ...] | None = field(default=None, repr=False)
    _slots: asyncio.Semaphore | None = field(default=None, repr=False)

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
            return error_result(f"the server is shutting down; {name!r} was not called")
        # The call counts as running (the shutdown wait) and, over HTTP, keeps its request's
        # --max-connections place from here until it ends, even if its client hangs up first (the
        # SDK does not cancel it then): its tool's run and every wait for its user's answer. A call
        # its client cancels ends for the SDK at once, but a sync tool's thread runs on: the call
        # ends when that thread does (HandlerThreads), and only then gives its place back.
        threads = HandlerThreads()
        call = self._started(name, getattr(request, "request_id", None), threads)
        release_place = hold_place(request)
        timeout_token = CALL_ANSWER_TIMEOUT.set(self.answer_timeout_s)  # for every ask of this call
        try:
            with threads.counting():
                if approving:
                    answered = await self._approval_answer(name, arguments, state, request)
                    return result_from_envelope(answered, self.registry.get(name).returns)
                return await self._run(name, arguments, request, with_elicitation, deferred)
        finally:
            CALL_ANSWER_TIMEOUT.reset(timeout_token)
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
            self._seen(session)
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
            token = self._remember_approval(name, approval)
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

    async def _ask_for_result(self, name: str, accepted: Any, request: Any) -> Any:
        message, schema = result_question(name, accepted)
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
        token = CALL_REQUEST.set(request)
        try:
            return await served.call(params.name, params.arguments, request)
        except MCPError:
            raise
        except Exception as exc:  # never a traceback to the client; the server log keeps it
            log.exception("tools/call %r failed inside reyn mcp serve", params.name)
            return error_result(f"tools/call {params.name!r} failed inside the server: {type(exc).__name__}")
        finally:
            CALL_REQUEST.reset(token)

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


__all__ = ["ServedRegistry", "build_server"]
