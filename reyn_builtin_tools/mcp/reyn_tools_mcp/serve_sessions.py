"""What a served registry keeps across its clients' requests: the client sessions its calls belong
to (``session_of``; their approvals end with the server: ``end_sessions``), the calls running (a
stop waits for them and names those it abandons: ``serve_stop``), and the questions put to
2026-07-28 clients that are waiting for their answer (one-time, bounded, expiring tokens), and
the retry that brings a deferred call's answer (``_answer``).

``ServedSessions`` is the base of ``serve.ServedRegistry``, whose call path uses this bookkeeping.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from reyn_core import ToolDenied
from reyn_core.host import HandlerThreads, ToolRegistry

from .serve_elicitation import DEFAULT_ANSWER_TIMEOUT_S, answer_not_unicode

log = logging.getLogger("reyn.mcp.serve")

MAX_PENDING = 1024
_CALL_KEYS = itertools.count()


@dataclass
class ServedSessions:
    """The bookkeeping of one served ``registry`` (the fields after it are keyword-only).

    ``transport`` tells which sessions a call can belong to (``stdio``, ``http``,
    ``http-stateless``); ``answer_timeout_s`` is how long a question waits for its answer.
    """

    registry: ToolRegistry
    _: KW_ONLY
    transport: str = "stdio"
    answer_timeout_s: float = DEFAULT_ANSWER_TIMEOUT_S
    _pending: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)
    _approval_states: dict[str, tuple[str, float]] = field(default_factory=dict, repr=False)
    _sessions: dict[str, None] = field(default_factory=dict, repr=False)  # ordered: oldest first
    _stdio_session: str = field(default_factory=lambda: "stdio-" + secrets.token_hex(8), repr=False)
    _running: int = field(default=0, repr=False)
    _calls: dict[int, tuple[str, HandlerThreads]] = field(default_factory=dict, repr=False)  # running
    _idle: asyncio.Event | None = field(default=None, repr=False)
    _closing: bool = field(default=False, repr=False)

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

    def _seen(self, session: str) -> None:
        """A call of ``session`` starts: it becomes the most recent of the sessions kept."""
        self._sessions.pop(session, None)  # the most recent last
        self._sessions[session] = None
        while len(self._sessions) > MAX_PENDING:  # bounded: a forgotten one ends at its TTL
            del self._sessions[next(iter(self._sessions))]

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

    def _remember_approval(self, name: str, approval: str) -> str:
        """A one-time token for an approval question put to a 2026-07-28 client, which answers by
        retrying the call with it (bounded and expiring like the deferred answers)."""
        token = self._remember(name)
        asked_at = self._pending.pop(token)[1]
        for key in [k for k, (_, t) in self._approval_states.items() if self._expired(t)]:
            del self._approval_states[key]  # never answered: the request ends at its TTL
        while len(self._approval_states) >= MAX_PENDING:  # bounded like the deferred answers
            del self._approval_states[next(iter(self._approval_states))]
        self._approval_states[token] = (approval, asked_at)
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


__all__ = ["MAX_PENDING", "ServedSessions"]
