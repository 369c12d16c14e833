"""``ProcessConnection``: the one connection a SQL approval store keeps per process, never used from a
forked child (a connection two processes drive corrupts its session: a child opens its own)."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any

_LIVE: weakref.WeakSet[ProcessConnection] = weakref.WeakSet()


class ProcessConnection:
    """This process's connection, opened by ``connect`` on first use and again after a fork or when
    ``alive`` says it is dead (by default, never). Hold ``lock`` (the store's: one transaction at a
    time) around ``get`` and while the connection is used; a forked child gets a fresh lock."""

    def __init__(self, connect: Callable[[], Any], *, alive: Callable[[Any], bool] = bool) -> None:
        self.lock = threading.Lock()
        self._connect, self._alive = connect, alive
        self._conn: Any = None
        self._pid = 0
        _LIVE.add(self)

    def get(self) -> Any:
        """The connection, opened now if this process has none (or only a dead one)."""
        if self._conn is None or self._pid != os.getpid() or not self._alive(self._conn):
            self._conn, self._pid = self._connect(), os.getpid()
        return self._conn

    def disconnect(self) -> None:
        """Close this process's connection (the next ``get`` opens one); one inherited across a fork is
        only forgotten: it is the parent's to close."""
        with self.lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None


def _after_fork_in_child() -> None:
    """A forked child has only the forking thread: a lock another thread held at the fork would
    never be released there, so each live store gets a fresh one."""
    for held in list(_LIVE):
        held.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["ProcessConnection"]
