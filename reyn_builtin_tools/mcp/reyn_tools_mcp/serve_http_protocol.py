"""The connection layer of ``reyn mcp serve --http``: uvicorn's h11 protocol with the bounds no ASGI
layer can set — the open-connection cap and the request's deadline (``capped_protocol``)."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("reyn.mcp.serve")


def capped_protocol(cap: int, header_timeout_s: float) -> type:
    """uvicorn's h11 protocol, closing a connection that would be the ``cap + 1``-th open one (before
    any byte of it is read), and one whose request — its head and its body — is not complete
    ``header_timeout_s`` after it opened or after its previous response was sent, and one answered
    before its request's body was read to its end (a refusal): the bound on open files holds even
    for peers that never finish (or start) their headers or bodies. (uvicorn's
    ``timeout_keep_alive`` starts only after a response and stops at the first byte of the next
    request, so half a request head held a connection for ever; h11 bounds the head's size, not its
    time.)"""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    refused = [0]
    overdue = [0]

    class CappedH11Protocol(H11Protocol):
        _head_timer: Any = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > cap:
                if refused[0] % 1000 == 0:  # (a flood of them writes a line per thousand)
                    log.warning("closed %d new connection(s): %d are open, the cap", refused[0] + 1, cap)
                refused[0] += 1
                transport.abort()
                return
            self._head_deadline()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if self.conn.their_state is h11.SEND_BODY:
                # answered (refused: 401, 503, 413 ...) before its body was read to its end: the
                # rest would hold the connection for as long as the peer cares not to send it
                self.transport.close()
                return
            self._head_deadline()  # the next request's head is due as the first one was

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _head_deadline(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            if not self.transport.is_closing():
                self._head_timer = self.loop.call_later(header_timeout_s, self._head_overdue)

        def _head_overdue(self) -> None:
            self._head_timer = None
            # IDLE: no complete request head since the deadline started; SEND_BODY: its head came
            # but its body is still arriving. One rule: a request's head and body are both in within
            # the timeout (a request being answered has moved past both; its response restarts it)
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
                if overdue[0] % 1000 == 0:
                    log.warning(
                        "closed %d connection(s) without a complete request (head and body) "
                        "within %gs (--header-timeout)",
                        overdue[0] + 1,
                        header_timeout_s,
                    )
                overdue[0] += 1
                self.transport.abort()

    return CappedH11Protocol
