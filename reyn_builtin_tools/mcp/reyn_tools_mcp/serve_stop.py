"""How ``reyn mcp serve`` stops: one path for stdio and streamable HTTP.

A stop begins with SIGTERM/SIGINT, or (stdio) with the client closing stdin. New calls are refused
(``isError``); running calls get ``--shutdown-grace`` seconds to finish (a second signal stops
waiting); then the transport closes, cancelling what still runs. A sync tool's thread cannot be
stopped: a call whose thread still runs then is *abandoned* — logged, and recorded in the audit log
as ``call.abandoned`` — and the process exits with ``EXIT_ABANDONED`` without waiting for it, once
its orderly cleanups ran: the sessions' approvals ended, upstream sessions closed and, since the
hard exit skips them, the ``atexit`` handlers (a database pool closed, buffered spans exported).
Those cleanups are bounded by ``CLEANUP_TIMEOUT_S``: one that hangs cannot keep the process up.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from reyn_core.host import JsonlAuditLog

log = logging.getLogger("reyn.mcp.serve")

DEFAULT_SHUTDOWN_GRACE_S = 5.0
EXIT_ABANDONED = 3
"""The exit status after abandoning calls: not a clean stop (0), nor a usage error (2)."""
CLEANUP_TIMEOUT_S = 10.0
"""How long the cleanups before an abandoning exit may take together; then the process exits anyway."""

T = TypeVar("T")


def add_stop_options(p: argparse.ArgumentParser) -> None:
    """The option of ``reyn mcp serve`` both transports stop by."""
    p.add_argument(
        "--shutdown-grace",
        type=float,
        default=DEFAULT_SHUTDOWN_GRACE_S,
        metavar="SECONDS",
        help="on SIGTERM/SIGINT (or stdin closed, over stdio), time running calls get to finish; a call "
        f"whose sync tool still runs then is abandoned and the process exits {EXIT_ABANDONED} "
        f"(default {DEFAULT_SHUTDOWN_GRACE_S:g})",
    )


def grace_problem(seconds: float) -> str | None:
    """Why ``--shutdown-grace`` is unusable (None: it is usable)."""
    if not seconds >= 0:  # also refuses nan
        return "--shutdown-grace must be a number of seconds, not negative"
    return None


class StopSignals:
    """SIGTERM/SIGINT while serving: the first sets ``stop``, a second ``hurry`` (stop waiting)."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.hurry = asyncio.Event()

    def _received(self) -> None:
        (self.hurry if self.stop.is_set() else self.stop).set()

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopSignals]:
        """Handle the signals on the running loop within (not where it cannot: another thread)."""
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self._received)
                installed.append(sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
                pass
        try:
            yield self
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)


async def wait_for_calls(
    served: Any,
    grace_s: float,
    hurry: asyncio.Event,
    why: str,
    drained: Coroutine[Any, Any, None] | None = None,
) -> None:
    """The stop's first part: refuse new calls, then wait up to ``grace_s`` until ``drained`` (by
    default: no call runs) or ``hurry``."""
    running = served.close()
    log.info("stopping: waiting up to %gs for %d running call(s) (%s)", grace_s, running, why)
    waits = {asyncio.ensure_future(drained or served.drained()), asyncio.ensure_future(hurry.wait())}
    try:
        await asyncio.wait(waits, timeout=grace_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()


def run_until_stopped(served: Any, serving: Coroutine[Any, Any, T]) -> T:
    """Run a transport (``serving``, which returns once it has closed) on a new event loop, then
    end the stop (``finish``). Calls still running when it has closed are abandoned from inside the
    loop: its close, and the interpreter's exit, would wait for their threads without a bound."""
    try:
        return asyncio.run(_abandoning(served, serving))
    finally:
        finish(served)


async def _abandoning(served: Any, serving: Coroutine[Any, Any, T]) -> T:
    try:
        return await serving
    finally:
        await asyncio.sleep(0)  # the ends a thread reported just now are counted first
        if served.running_calls():
            finish(served)  # does not return


def finish(served: Any) -> None:
    """The stop's end, after the transport closed: the sessions' approvals end and upstream sessions
    close. When calls still run (their threads cannot be stopped), they are abandoned: named in the
    log and the audit log, the ``atexit`` handlers run, and the process exits ``EXIT_ABANDONED``
    now, all within ``CLEANUP_TIMEOUT_S``."""
    from . import client

    abandoned = served.running_calls()
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("ending the sessions' approvals", served.end_sessions),
        ("closing upstream sessions", client.shutdown),
    ]
    if abandoned:
        log.warning(
            "abandoned %d call(s) still running after --shutdown-grace (their threads cannot be stopped): %s",
            len(abandoned),
            "; ".join(abandoned),
        )
        # the exit below skips atexit: its handlers run here (a pool's close, a span exporter's flush)
        steps = [("auditing the abandoned calls", lambda: _audit_abandoned(served)), *steps]
        steps.append(("running the atexit handlers", atexit._run_exitfuncs))
    _run_within(CLEANUP_TIMEOUT_S if abandoned else None, steps)
    log.info("stopped")
    if abandoned:
        logging.shutdown()  # flush the log
        os._exit(EXIT_ABANDONED)


def _audit_abandoned(served: Any) -> None:
    """A ``call.abandoned`` line per abandoned call in each audit log of the served registry."""
    hooks = served.registry.hooks
    logs = [h for h in (hooks.after if hooks is not None else ()) if isinstance(h, JsonlAuditLog)]
    for call in served.abandoned_calls():
        for audit in logs:
            audit.abandoned(call)


def _run_within(timeout_s: float | None, steps: list[tuple[str, Callable[[], Any]]]) -> None:
    """Run ``steps`` in order (one that fails is logged; the next runs), in a daemon thread given
    ``timeout_s`` (None: here, unbounded) — past it the rest is skipped and said so."""
    at = [""]

    def run() -> None:
        for what, step in steps:
            at[0] = what
            try:
                step()
            except Exception as exc:
                log.warning("stopping: %s failed: %s: %s", what, type(exc).__name__, exc)
        at[0] = ""

    if timeout_s is None:
        run()
        return
    thread = threading.Thread(target=run, name="reyn-mcp-stop", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        log.warning("stopping: %s did not finish within %gs; exiting without it", at[0], timeout_s)


__all__ = [
    "CLEANUP_TIMEOUT_S",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "EXIT_ABANDONED",
    "StopSignals",
    "add_stop_options",
    "finish",
    "grace_problem",
    "run_until_stopped",
    "wait_for_calls",
]
