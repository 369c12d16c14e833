"""Each MCP session's transport fault: recorded once, read by the calls that ran on that session.

A transport fault — a message the SDK cannot parse, one over ``max_message_bytes``, output that
ended mid-message — ends the session it happened on. Every session has its own ``SessionFault``
(made with its owner, before the handshake, so a fault during the handshake is kept too); the
calls still waiting on that session fail with its words and let go of that session only, never of
whichever session is current when their handlers run: a call that already opened the next session
is not touched by a stale one's fault. The words are Reyn's (``failures``); the parser's own text
goes to the operator's log only.
"""

from __future__ import annotations

import weakref

from mcp import ClientSession

from . import failures


class SessionFault:
    """One session's first transport fault: ``words`` (Reyn's, for the model; None while there is
    none) and ``raw`` (as the parser reported it, for the operator's log only)."""

    __slots__ = ("raw", "words")

    def __init__(self) -> None:
        self.words: str | None = None
        self.raw = ""

    def record(self, words: str, raw: str = "") -> bool:
        """Keep the first fault only; whether this one was the first."""
        if self.words is not None:
            return False
        self.words, self.raw = words, raw
        return True

    def lost(self, server: str, what: str, exc: BaseException | None, *, hint: str, stderr: str) -> str:
        """The error of a call on this session whose connection was lost during ``what``: the fault's
        words if there was one, else the kind of ``exc``; ``hint`` ends the sentence (the sandbox
        grants), ``stderr`` goes to the log with the raw fault."""
        fault = f": {self.words}" if self.words else ""
        kind = f" ({failures.reason(exc)})" if exc is not None and not self.words else ""
        return failures.report(
            server,
            f"the connection to MCP server {server!r} was lost during {what}{fault}{kind}; it will be "
            "reopened on the next call" + hint,
            self.raw + "\n" + failures.raw_text(exc, stderr),
        )


class SessionFaults:
    """The fault of each open session, by session (held weakly: a closed session's goes with it)."""

    def __init__(self) -> None:
        self._of: weakref.WeakKeyDictionary[ClientSession, SessionFault] = weakref.WeakKeyDictionary()

    def opened(self, session: ClientSession, fault: SessionFault) -> None:
        """``session`` finished its handshake; its owner records its faults in ``fault``."""
        self._of[session] = fault

    def of(self, session: ClientSession) -> SessionFault:
        """The fault record of ``session`` (a blank one for a session never opened here)."""
        return self._of.get(session) or SessionFault()
