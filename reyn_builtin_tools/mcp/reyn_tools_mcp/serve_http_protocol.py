"""The connection layer of ``reyn mcp serve --http``: uvicorn's h11 protocol with the bounds no ASGI
layer can set — the open-connection cap and the request's deadline (``capped_protocol``)."""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Any

log = logging.getLogger("reyn.mcp.serve")


def unsent_bytes(transport: Any) -> int:
    """The bytes written to ``transport`` that its peer has not taken yet: those in the transport's
    own buffer and, where the system says (Linux: ``TIOCOUTQ``, alias ``SIOCOUTQ``), those in the
    socket's send queue not yet acknowledged — the peer's system acknowledges only what its reads
    make room for. (The transport's buffer alone moves only when the kernel's queue, which grows
    to megabytes, has half emptied: a peer reading steadily could take none of it for seconds.)"""
    unsent = transport.get_write_buffer_size()
    sock = transport.get_extra_info("socket")
    with contextlib.suppress(ImportError, AttributeError, OSError, TypeError):
        import fcntl
        import termios

        queued = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        unsent += int.from_bytes(queued, sys.byteorder, signed=True)
    return unsent


class _Counting:
    """A transport counting the bytes written to it (``written``); the rest is the transport's own."""

    def __init__(self, inner: Any) -> None:
        self._inner, self.written = inner, 0

    def write(self, data: bytes) -> None:
        self._inner.write(data)
        self.written += len(data)  # once written: a write that raised took nothing

    def writelines(self, lines: Any) -> None:  # not used by uvicorn's h11 protocol today: counted too
        for data in lines:
            self.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def taken_bytes(transport: Any) -> int:
    """The bytes of what was written to ``transport`` that its peer has taken: only ever grows,
    whatever is written meanwhile (the unsent bytes alone grow with each write)."""
    return transport.written - unsent_bytes(transport)


def capped_protocol(cap: int, header_timeout_s: float, send_timeout_s: float) -> type:
    """uvicorn's h11 protocol, closing a connection that would be the ``cap + 1``-th open one (before
    any byte of it is read), one whose request — its head and its body — is not complete
    ``header_timeout_s`` after it opened or after its previous response was sent, one whose answer
    waits ``send_timeout_s`` without the peer taking a byte of it, and one answered before its
    request's body was read to its end (a refusal): the bound on open files, and on the places of
    ``--max-connections``, holds even for peers that never finish (or start) their headers or
    bodies, or never read their answers. (uvicorn's ``timeout_keep_alive`` starts only after a
    response and stops at the first byte of the next request, so half a request head held a
    connection for ever; h11 bounds the head's size, not its time; and an answer's last write waits
    for the peer to have read the one before, without a bound.) A response started before its
    request's body has all come says ``Connection: close`` and ends its connection (``_ClosingEarly``).

    One deadline per connection, started when it opens, when a response has been handed to it, and
    when writing pauses or resumes: ``send_timeout_s`` while bytes of an answer wait in the server's
    buffer (the peer's and the system's buffers are full), else ``header_timeout_s``. Never closed
    for its next request while its previous answer still waits: that answer's deadline applies, and
    the next request is due from when it has left. Pipelined requests are served in turn."""
    import h11
    from uvicorn.protocols.http.h11_impl import DEFAULT_MAX_INCOMPLETE_EVENT_SIZE, H11Protocol

    refused = [0]
    overdue = [0]
    unread = [0]
    upgrades = [0]

    class _ClosingEarly(h11.Connection):
        """A response started before its request's body has all come (a refusal: 401, 413, 415,
        503 ...) says ``Connection: close``, and the connection ends after it (h11 then holds it
        as must-close; uvicorn closes it): the unread rest would hold the connection for as long as
        the peer cares not to send it, and a client told nothing would send its next request on a
        connection being closed under it."""

        def send_with_data_passthrough(self, event: Any) -> list[bytes] | None:  # what send() calls
            if isinstance(event, h11.Response) and self.their_state is h11.SEND_BODY:
                headers = [*event.headers.raw_items(), (b"connection", b"close")]
                event = h11.Response(
                    status_code=event.status_code,
                    headers=headers,
                    reason=event.reason,
                    http_version=event.http_version,
                )
            return super().send_with_data_passthrough(event)

    class CappedH11Protocol(H11Protocol):
        _deadline: Any = None
        _taken = 0  # bytes the peer had taken when the deadline started
        _answered = False  # a response was sent on it (a later idle close is a keep-alive's end)

        def connection_made(self, transport: Any) -> None:
            counting: Any = _Counting(transport)  # the transport's own interface, writes counted
            super().connection_made(counting)
            if len(self.connections) > cap:
                if refused[0] % 1000 == 0:  # (a flood of them writes a line per thousand)
                    log.warning("closed %d new connection(s): %d are open, the cap", refused[0] + 1, cap)
                refused[0] += 1
                transport.abort()
                return
            self._start_deadline()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            size = self.config.h11_max_incomplete_event_size
            self.conn = _ClosingEarly(h11.SERVER, size or DEFAULT_MAX_INCOMPLETE_EVENT_SIZE)

        def on_response_complete(self) -> None:
            self._answered = True
            super().on_response_complete()
            self._start_deadline()  # the next request is due as the first one was

        def pause_writing(self) -> None:
            super().pause_writing()
            self._start_deadline()

        def resume_writing(self) -> None:
            super().resume_writing()
            self._start_deadline()

        def _unsupported_upgrade_warning(self) -> None:
            # uvicorn's two lines per upgrade request (one advising to install a websocket library,
            # which is deliberately not served), written like the other floods: a line per thousand
            if upgrades[0] % 1000 == 0:
                what = "answered %d upgrade request(s) as plain HTTP (no websocket is served)"
                log.warning(what, upgrades[0] + 1)
            upgrades[0] += 1

        def connection_lost(self, exc: Exception | None) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            super().connection_lost(exc)

        def _start_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            if self.transport.get_write_buffer_size():  # an answer waits for the peer (closing or not)
                self._taken = taken_bytes(self.transport)
                self._deadline = self.loop.call_later(send_timeout_s, self._overdue, True)
            elif not self.transport.is_closing():
                self._deadline = self.loop.call_later(header_timeout_s, self._overdue, False)

        def _overdue(self, sending: bool) -> None:
            self._deadline = None
            if self.transport.get_write_buffer_size():
                # an answer waits in the server's buffer: as long again if the peer took some of it
                # since the send deadline started (or none had started), else it never will
                if not sending or taken_bytes(self.transport) > self._taken:
                    self._start_deadline()
                    return
                why = "whose client took none of its answer within %gs (--send-timeout)"
                self._abort(unread, why, send_timeout_s)
            elif sending:
                self._start_deadline()  # the answer has left: the next request is due from now
            # IDLE: no complete request head since the deadline started; SEND_BODY: its head came
            # but its body is still arriving. One rule: a request's head and body are both in within
            # the timeout (a request being answered has moved past both; its response restarts it)
            elif self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
                idle = self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]
                if idle and self._answered:  # a keep-alive's end: not worth a line
                    self.transport.close()
                    return
                why = "without a complete request (head and body) within %gs (--header-timeout)"
                self._abort(overdue, why, header_timeout_s, graceful=idle)

        def _abort(self, count: list[int], why: str, timeout: float, graceful: bool = False) -> None:
            if count[0] % 1000 == 0:
                log.warning("closed %d connection(s) " + why, count[0] + 1, timeout)
            count[0] += 1
            # not a byte of a request came: closed gracefully (a reset could reach a client that
            # sent its next request meanwhile as an error, where a close lets it retry elsewhere)
            if graceful:
                self.transport.close()
            else:
                self.transport.abort()

    return CappedH11Protocol
