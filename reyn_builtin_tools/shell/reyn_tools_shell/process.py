"""Running one argv: its own session and process group, capped output, a timeout that kills the group.

The process starts with ``start_new_session=True``, so it leads a new process group. When it times
out — or when the call is cancelled — the whole group gets ``SIGKILL``. After the leader exits, the
group is killed again, so background children it left behind do not survive the call either.
(A process that calls ``setsid()`` itself leaves the group; the output drain is then bounded by
``DRAIN_GRACE_S`` so the call still ends.)
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CHUNK = 64 * 1024
DRAIN_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did. ``exit_code`` is negative when a signal ended it (``-9`` after a timeout)."""

    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool
    stdout_truncated: bool
    stderr_truncated: bool


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process in group ``pgid`` (none left is fine)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _drain(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, int]:
    kept = bytearray()
    dropped = 0
    while True:
        chunk = await stream.read(CHUNK)
        if not chunk:
            return bytes(kept), dropped
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))


def _text(name: str, data: bytes, dropped: int, cap: int, incomplete: bool) -> str:
    text = data.decode("utf-8", errors="replace")
    if dropped:
        text += f"\n[... {dropped} more bytes of {name} not shown: output is capped at {cap} bytes]"
    if incomplete:
        text += f"\n[... {name} still held open by a process that left the process group; stopped reading]"
    return text


async def _collect(task: asyncio.Task[tuple[bytes, int]]) -> tuple[bytes, int, bool]:
    try:
        data, dropped = await asyncio.wait_for(asyncio.shield(task), DRAIN_GRACE_S)
        return data, dropped, False
    except asyncio.TimeoutError:
        task.cancel()
        return b"", 0, True


async def run_command(executable: str, argv: list[str], *, cwd: Path, env: dict[str, str],
                      timeout_s: float, max_output_bytes: int) -> CommandResult:
    """Run ``argv`` (``executable`` as its program) and return what it did; never through a shell."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        executable, *argv[1:],
        cwd=str(cwd), env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    pgid = proc.pid  # leader of its own new session and process group
    assert proc.stdout is not None and proc.stderr is not None
    out_task = asyncio.ensure_future(_drain(proc.stdout, max_output_bytes))
    err_task = asyncio.ensure_future(_drain(proc.stderr, max_output_bytes))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
            kill_group(pgid)
            await proc.wait()
        kill_group(pgid)  # children left running in the background do not outlive the call
        out, out_dropped, out_incomplete = await _collect(out_task)
        err, err_dropped, err_incomplete = await _collect(err_task)
    finally:
        if proc.returncode is None:  # cancelled from outside: nothing may keep running
            kill_group(pgid)
            try:
                await asyncio.shield(proc.wait())
            except asyncio.CancelledError:
                pass
        for task in (out_task, err_task):
            task.cancel()
    duration = time.monotonic() - started
    return CommandResult(
        argv=argv,
        exit_code=proc.returncode if proc.returncode is not None else -1,
        stdout=_text("stdout", out, out_dropped, max_output_bytes, out_incomplete),
        stderr=_text("stderr", err, err_dropped, max_output_bytes, err_incomplete),
        duration_s=round(duration, 3),
        timed_out=timed_out,
        stdout_truncated=bool(out_dropped) or out_incomplete,
        stderr_truncated=bool(err_dropped) or err_incomplete,
    )
