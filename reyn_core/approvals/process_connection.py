"""``ProcessConnection``: the one connection a SQL approval store keeps per process, never used from a
forked child (a connection two processes drive corrupts its session: a child opens its own)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any


class ProcessConnection:
    """This process's connection, opened by ``connect`` on first use and again after a fork or when
    ``alive`` says it is dead (by default, never). Hold ``lock`` (the store's: one transaction at a
    time) around ``get`` and while the connection is used."""

    def __init__(self, connect: Callable[[], Any], *, alive: Callable[[Any], bool] = bool) -> None:
        self.lock = threading.Lock()
        self._connect, self._alive = connect, alive
        self._conn: Any = None
        self._pid = 0

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


__all__ = ["ProcessConnection"]
