"""One upstream call's time: everything the call waits on comes out of it.

A call with timeout T waits, in turn, for the connection's old server to stop and for the answers
of its requests (a ``tools/list`` before its ``tools/call``, the ``ping`` that tells a lost
connection from an error answer). Each wait is bounded by what is ``left`` of the one ``Deadline``
the call started with, never by a fresh T of its own (before, each step had its own T, and a call
could take about 2T, or 3T with a listing). A new server's handshake is not the call's: it has its
own bound, ``connect_timeout_s`` (a server that takes 10 s to start is not a call that took 10 s),
and the time the call waited for it is ``exclude``-d from its budget. The clock is
``time.monotonic``, the event loop's own, so a deadline made on the caller's thread holds on the
session pool's loop.
"""

from __future__ import annotations

import time


class Deadline:
    """The end of one call: ``timeout_s`` (its budget, as configured) from when it was made."""

    __slots__ = ("_end", "timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._end = time.monotonic() + timeout_s

    @classmethod
    def of(cls, timeout: float | Deadline) -> Deadline:
        """``timeout`` if it is a deadline already (a step of a call), else one starting now."""
        return timeout if isinstance(timeout, Deadline) else cls(timeout)

    def exclude(self, seconds: float) -> None:
        """Leave ``seconds`` out of this call's budget: a wait with its own bound (the handshake)."""
        self._end += seconds

    def left(self) -> float:
        """The seconds still left (0 once it has passed)."""
        return max(0.0, self._end - time.monotonic())


__all__ = ["Deadline"]
