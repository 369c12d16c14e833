"""A SQL store's connection is its process's own (``ProcessConnection``, issue 24): a forked child
that uses the store opens its own connection, and after the child used it and disconnected, the
parent keeps working on the connection it had. Both stores, on a real SQLite file and the real
PostgreSQL server of tests/conftest.py, in a real ``os.fork`` child."""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import pytest
from approval_records import pending_record

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")


def _in_child(work: Any) -> int:
    """Run ``work`` in a forked child; its exit status (0: it ran, 1: it raised, -9: it was stuck)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            work()
        except BaseException as exc:
            print(f"child failed: {exc!r}", file=sys.stderr)
            os._exit(1)
        os._exit(0)
    deadline = time.monotonic() + 60  # bounded: a child stuck on a lock another thread held is killed
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        done = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(done[1])


def test_a_forked_child_opens_its_own_connection_and_leaves_the_parents_open(store: Any) -> None:
    first = store.open_request(pending_record("fork-parent", session="s1"))
    parents = store._connection.get()

    def child() -> None:
        assert store._connection.get() is not parents
        store.open_request(pending_record("fork-child", session="s1"))
        store.disconnect()

    assert _in_child(child) == 0
    # the parent's connection is the one it had, still open: it reads what the child wrote
    assert store._connection.get() is parents
    assert store.get(first.id) is not None
    assert store.open_request(pending_record("fork-parent", session="s1")).id == first.id


def test_a_child_forked_while_another_thread_holds_the_stores_lock_can_use_the_store(store: Any) -> None:
    # The parent's lock is held, at the fork, by a thread the child does not have: the child's store
    # must not wait on it forever (SQLite) or refuse every call (PostgreSQL's bounded wait).
    import threading

    store.open_request(pending_record("fork-held", session="s1"))
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store._connection.lock:
            holding.set()
            release.wait(120)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(30)
    try:
        status = _in_child(lambda: store.open_request(pending_record("fork-child-held", session="s1")))
    finally:
        release.set()
        holder.join(30)
    assert status == 0
    assert store.open_request(pending_record("fork-held", session="s1")) is not None  # the parent goes on
