"""Asking the person behind the MCP client: elicitation (``elicit``, ``answer_within``), the check
of their answers (``answer_not_unicode``), and the host bridges that ask them (``ask_user``, and
the catalog's deferred work accepted as records: ``elicitation_bridge``).

The request a call is answering and its answer deadline reach the bridges through context
variables (``CALL_REQUEST``, ``CALL_ANSWER_TIMEOUT``) that the server sets around each call.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import secrets
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types

from reyn_core import HostBridge, ToolContext, ToolDenied
from reyn_core.host import describe_lone_surrogate, lone_surrogate_at

from .serve_http_middleware import answer_expected

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

DEFAULT_ANSWER_TIMEOUT_S = 600.0
"""How long a call waits for its user's answer (``--answer-timeout``), both ways of asking: a
mid-call ask (elicitation) waits this long, and a 2026-07-28 ``requestState`` (a deferred tool's
result, an approval question) is honoured this long after it was issued."""

# The MCP request a tool call is answering, for the bridges that talk back to the client.
CALL_REQUEST: contextvars.ContextVar[ServerRequestContext[Any, Any] | None] = contextvars.ContextVar(
    "reyn_mcp_request", default=None
)
# How long the call being answered waits for its user (its server's --answer-timeout).
CALL_ANSWER_TIMEOUT: contextvars.ContextVar[float] = contextvars.ContextVar(
    "reyn_mcp_answer_timeout", default=DEFAULT_ANSWER_TIMEOUT_S
)


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
    request = CALL_REQUEST.get()
    if request is None or not can_elicit(request) or not request.session.can_send_request:
        raise ToolDenied(
            f"tool {tool!r} needs to ask the user, and this MCP client cannot be asked "
            "in the middle of a call",
            tool=tool,
        )
    timeout_s = CALL_ANSWER_TIMEOUT.get()
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


def result_question(name: str, accepted: Any) -> tuple[str, dict[str, Any]]:
    """The question (message and form) that asks the client's user for a deferred call's result."""
    shown = json.dumps(accepted, ensure_ascii=False, indent=2)[:4000]
    message = f"The model called {name!r}; its result has to come from you.\n{shown}"
    schema = {
        "type": "object",
        "properties": {"result": {"type": "string", "description": f"the result of {name}"}},
        "required": ["result"],
    }
    return message, schema


__all__ = [
    "ASK_ID_PREFIX",
    "CALL_ANSWER_TIMEOUT",
    "CALL_REQUEST",
    "DEFAULT_ANSWER_TIMEOUT_S",
    "answer_not_unicode",
    "answer_within",
    "can_elicit",
    "elicit",
    "elicitation_bridge",
    "result_question",
]
