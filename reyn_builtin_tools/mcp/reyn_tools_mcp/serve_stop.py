"""How ``reyn mcp serve`` stops: one path for stdio and streamable HTTP.

A stop begins with SIGTERM/SIGINT, or (stdio) with the client closing stdin. New calls are refused
(``isError``); running calls get ``--shutdown-grace`` seconds to finish (a second signal stops
waiting); then the transport closes, cancelling what still runs, within the grace again (at least
``MIN_CLOSE_S``; a further signal stops waiting). A sync tool's thread cannot be stopped, and an
async tool may swallow its cancellation: a call whose tool still runs then is *abandoned* — logged,
and recorded in the audit log as ``call.abandoned`` — and the process exits with ``EXIT_ABANDONED``
without waiting for it. Every stop ends with the process's orderly cleanups: the sessions' approvals
ended, upstream sessions closed and, since the exit (``os._exit``, also after a clean stop: the
interpreter would run them again, and wait for threads) skips them, the ``atexit`` handlers (a
database pool closed, buffered spans exported). They are bounded by ``CLEANUP_TIMEOUT_S`` together:
one that hangs cannot keep the process up; a further signal during them exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, NoReturn

from reyn_core.host import JsonlAuditLog

log = logging.getLogger("reyn.mcp.serve")

DEFAULT_SHUTDOWN_GRACE_S = 5.0
EXIT_ABANDONED = 3
"""The exit status after abandoning calls: not a clean stop (0), nor a usage error (2)."""
CLEANUP_TIMEOUT_S = 10.0
"""How long the cleanups before the exit may take together; then the process exits anyway."""
MIN_CLOSE_S = 1.0
"""The least time the transport gets to close once told to (``closed``), however short the grace."""


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
    """SIGTERM/SIGINT while serving: the first sets ``stop``, a second ``hurry`` (stop waiting);
    each sets ``again`` (``closed`` clears it to wait for a further one)."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.hurry = asyncio.Event()
        self.again = asyncio.Event()

    def _received(self) -> None:
        (self.hurry if self.stop.is_set() else self.stop).set()
        self.again.set()

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


async def closed(served: Any, serving: asyncio.Future[Any], grace_s: float, signals: StopSignals) -> None:
    """The stop's second part, once the transport was told to close (what still runs cancelled):
    wait for it to close, up to ``grace_s`` again (at least ``MIN_CLOSE_S``) or a further signal. A
    transport that has not closed then holds a task that ignores its cancellation (an async tool
    swallowing it): the stop ends now (``finish``, which does not return), abandoning what runs."""
    signals.again.clear()
    further = asyncio.ensure_future(signals.again.wait())
    try:
        bound = max(grace_s, MIN_CLOSE_S)
        await asyncio.wait({serving, further}, timeout=bound, return_when=asyncio.FIRST_COMPLETED)
    finally:
        further.cancel()
    if not serving.done():
        if served.still_running():
            log.warning("stopping: the transport did not close (a call ignores its cancellation)")
        else:  # a client's standing stream, a second signal, a stdin read nothing can cancel
            log.info("stopping: not waiting longer for the transport to close (no call runs)")
        finish(served, 0)
    await serving  # its outcome (a failure raises)


def run_until_stopped(served: Any, serving: Coroutine[Any, Any, int]) -> NoReturn:
    """Run a transport (``serving``, which returns its exit status once it has closed) on a new event
    loop, then end the stop (``finish``) from inside it, and exit: calls still running then are
    abandoned (the loop's close, and the interpreter's exit, would wait for them without a bound)."""
    asyncio.run(_stopping(served, serving))
    os._exit(EXIT_ABANDONED)  # not reached: _stopping exits


async def _stopping(served: Any, serving: Coroutine[Any, Any, int]) -> None:
    status = 1
    try:
        status = await serving
    except Exception:
        log.exception("the server failed")
    finally:
        await asyncio.sleep(0)  # the ends a thread reported just now are counted first
        finish(served, status)  # does not return


def finish(served: Any, status: int) -> NoReturn:
    """The stop's end, once the transport closed or was not waited for longer (a transport left open
    with no call running loses nothing): the sessions' approvals end, upstream sessions close, the
    ``atexit`` handlers run, all within ``CLEANUP_TIMEOUT_S``, and the process exits — ``status``,
    or ``EXIT_ABANDONED`` when calls still run (their threads cannot be stopped, or their tasks
    ignored their cancellation): those are named in the log and in the audit log
    (``call.abandoned``). A further signal meanwhile exits at once, with the status already decided."""
    from . import pool

    abandoned = served.still_running()
    if abandoned:
        status = EXIT_ABANDONED
    _exit_on_signal(status)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("ending the sessions' approvals", served.end_sessions),
        ("closing upstream sessions", pool.shutdown),
        # the exit below skips atexit: its handlers run here (a pool's close, a span exporter's flush)
        ("running the atexit handlers", atexit._run_exitfuncs),
    ]
    if abandoned:
        log.warning(
            "abandoned %d call(s) still running after --shutdown-grace (their threads cannot be "
            "stopped, or they ignore their cancellation): %s",
            len(abandoned),
            "; ".join(abandoned),
        )
        steps.insert(0, ("auditing the abandoned calls", lambda: _audit_abandoned(served)))
    _run_within(CLEANUP_TIMEOUT_S, steps)
    log.info("stopped")
    _exit(status)


def _exit(status: int) -> NoReturn:
    """Exit now: no interpreter shutdown (it would run atexit again, and wait for threads)."""
    logging.shutdown()  # flush the log
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _exit_on_signal(status: int) -> None:
    """From now on SIGTERM/SIGINT exit at once with ``status`` (the cleanups are cut short)."""

    def received(signum: int, _frame: Any) -> None:
        os.write(2, f"reyn mcp serve: signal {signum} during the stop's cleanups: exiting now\n".encode())
        os._exit(status)

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            signal.signal(sig, received)


def _audit_abandoned(served: Any) -> None:
    """A ``call.abandoned`` line per abandoned call in each audit log of the served registry."""
    hooks = served.registry.hooks
    logs = [h for h in (hooks.after if hooks is not None else ()) if isinstance(h, JsonlAuditLog)]
    for call in served.abandoned_calls():
        for audit in logs:
            audit.abandoned(call)


def _run_within(timeout_s: float, steps: list[tuple[str, Callable[[], Any]]]) -> None:
    """Run ``steps`` in order (one that fails is logged; the next runs), in a daemon thread given
    ``timeout_s`` — past it the rest is skipped and said so."""
    at = [""]

    def run() -> None:
        for what, step in steps:
            at[0] = what
            try:
                step()
            except Exception as exc:
                log.warning("stopping: %s failed: %s: %s", what, type(exc).__name__, exc)
        at[0] = ""

    thread = threading.Thread(target=run, name="reyn-mcp-stop", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        log.warning("stopping: %s did not finish within %gs; exiting without it", at[0], timeout_s)


__all__ = [
    "CLEANUP_TIMEOUT_S",
    "DEFAULT_SHUTDOWN_GRACE_S",
    "EXIT_ABANDONED",
    "MIN_CLOSE_S",
    "StopSignals",
    "add_stop_options",
    "closed",
    "finish",
    "grace_problem",
    "run_until_stopped",
    "wait_for_calls",
]
