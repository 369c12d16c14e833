"""Running one argv: its own session and process group, capped output, a timeout that kills every
descendant.

Inside the kernel sandbox the host starts only the launcher (``reyn_sandbox``), in a new session,
holding the write end of a *stop pipe* whose read end the launcher watches (``--stop-fd``). The
launcher's PID 1 is init of a PID namespace of its own: when it dies the kernel kills every process
in it, one that called ``setsid()`` or double-forked included. On timeout or cancellation the host
writes a byte to its end and closes it (the byte: a process forked from the host meanwhile holds a
copy of the end, so the close alone would not hang the pipe up); the host's death closes it too,
whichever thread started the call. The launcher then kills
PID 1 and exits only once the kernel has reaped the whole sandbox. If it does not within
``STOP_GRACE_S``, its group is killed (PID 1 dies with it: ``PR_SET_PDEATHSIG``).

Unconfined, on Linux the command runs under ``supervisor.py`` (a small stdlib-only script, started in
a new session), which makes itself a child subreaper: every descendant — even one that called
``setsid()`` to leave the process group — is re-parented to it, and when the command exits, times
out or the call is cancelled (the runner sends the supervisor ``SIGTERM``), it kills and reaps them
all before it exits. The supervisor itself is killed with its group if it does not finish within
``STOP_GRACE_S``.

Elsewhere (or when ``sys.executable`` is not a Python that can run the script) the command itself
starts with ``start_new_session=True`` and leads a new process group; on timeout or cancellation,
and again after it exits, the whole group gets ``SIGKILL``. A process that calls ``setsid()``
leaves that group; the output drain is then bounded by ``DRAIN_GRACE_S`` so the call still ends.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reyn_sandbox import StopPipe, caller_pipe

CHUNK = 64 * 1024
DRAIN_GRACE_S = 2.0
STOP_GRACE_S = 15.0
SUPERVISOR = Path(__file__).with_name("supervisor.py")


def supervised() -> bool:
    """Whether commands run under the subreaper supervisor (Linux, with a runnable Python)."""
    exe = sys.executable or ""
    return (
        sys.platform.startswith("linux")
        and SUPERVISOR.is_file()
        and os.access(exe, os.X_OK)
        and os.path.basename(exe).startswith(("python", "pypy"))
    )  # not an embedding host's binary


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
    verdict: str = ""
    """What the sandbox launcher said on its verdict pipe (a setup failure, a limit that ended the
    command; ``sandbox.sandbox_failure``), never the command's words; empty unconfined."""


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


@dataclass(slots=True)
class _Control:
    """How the host stops a started command and learns its exit code."""

    kind: str  # "launcher" (stop: the launch's stop pipe), "supervisor" (fd: the status pipe's read
    # end) or "group" (no fd: the command leads its own group)
    fd: int | None = None
    verdict_fd: int | None = None  # the launcher's: the verdict pipe's read end
    stop: StopPipe | None = None

    def ask_to_stop(self, proc: asyncio.subprocess.Process) -> bool:
        """Ask what was started to stop everything it runs: the launcher through its stop pipe
        (``reyn_sandbox.StopPipe.stop``), the supervisor by ``SIGTERM``; False when there is no one
        to ask (kill the group)."""
        if self.stop is not None:
            self.stop.stop()
            return True
        if self.kind == "supervisor":
            try:
                proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            return True
        return False

    def exit_code(self, returncode: int | None, stopped: bool) -> int:
        """The command's exit code: ``-9`` for a sandboxed command the host stopped, the
        supervisor's report, else the process's own return code (the launcher's is the command's)."""
        if self.kind == "launcher" and stopped:
            return -signal.SIGKILL
        if self.kind == "supervisor" and self.fd is not None:
            try:
                text = os.read(self.fd, 64).decode("ascii", errors="replace").strip()
            except OSError:
                text = ""
            if text.lstrip("-").isdigit():
                return int(text)
        return returncode if returncode is not None else -1

    def verdict(self) -> str:
        """What the launcher wrote to the verdict pipe, once it has exited (it and its PID 1 wrote
        it before: it waits for PID 1); read without blocking, in case a fork of the host holds a
        copy of the write end."""
        if self.verdict_fd is None:
            return ""
        data = b""
        os.set_blocking(self.verdict_fd, False)
        try:
            while len(data) < CHUNK:
                chunk = os.read(self.verdict_fd, CHUNK)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:
            pass
        return data.decode("utf-8", errors="replace")

    def close(self, exited: bool) -> None:
        """Close the host's ends. ``exited``: what was started has been waited for, so the stop pipe
        is only closed (``StopPipe.close``); else the launcher, if any, is asked to stop."""
        for fd in (self.fd, self.verdict_fd):
            if fd is not None:
                os.close(fd)
        self.fd = self.verdict_fd = None
        if self.stop is not None:
            if exited:
                self.stop.close()
            else:
                self.stop.stop()


async def _stop(proc: asyncio.subprocess.Process, pgid: int, control: _Control) -> None:
    """Stop the command and everything it started: ask the launcher or the supervisor (each ends
    every descendant), or kill the command's group; the group of what was asked is killed if it does
    not finish."""
    if control.ask_to_stop(proc):
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), STOP_GRACE_S)
            return
        except asyncio.TimeoutError:
            pass
    kill_group(pgid)
    await proc.wait()


async def run_command(
    executable: str,
    argv: list[str],
    *,
    launcher: Callable[[int, int], Sequence[str]] | None = None,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    max_output_bytes: int,
) -> CommandResult:
    """Run ``argv`` (``executable`` as its program) and return what it did; never through a shell.
    ``launcher``: for a sandboxed command, the sandbox launcher's argv given the read end of the stop
    pipe and the write end of the verdict pipe (``sandbox.launcher_for``); the launcher is then the
    one process started, and it confines itself and execs ``executable``."""
    started = time.monotonic()
    child_fds: tuple[int, ...] = ()
    if launcher is not None:
        stop = StopPipe()
        try:
            verdict_r, verdict_w = caller_pipe()
        except BaseException:
            stop.stop()
            raise
        assert stop.launcher_fd is not None
        control = _Control("launcher", verdict_fd=verdict_r, stop=stop)
        child_fds = (stop.launcher_fd, verdict_w)
    elif supervised():
        host_fd, child_fd = caller_pipe()
        control = _Control("supervisor", host_fd)
        child_fds = (child_fd,)
    else:
        control = _Control("group")
    try:
        command: tuple[str, ...]
        if launcher is not None:
            command = tuple(launcher(*child_fds))
        elif child_fds:
            supervisor = (sys.executable, "-I", "-S", str(SUPERVISOR), str(child_fds[0]), str(os.getpid()))
            command = (*supervisor, executable, *argv[1:])
        else:
            command = (executable, *argv[1:])
        proc = await asyncio.create_subprocess_exec(
            *command,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=child_fds,
        )
    except BaseException:
        control.close(exited=False)
        raise
    finally:  # the child holds its ends now (or never will): the host's copies are closed
        for fd in child_fds[1:] if control.stop is not None else child_fds:  # the stop pipe's: below
            os.close(fd)
        if control.stop is not None:
            control.stop.launched()
    try:
        return await _supervise(proc, argv, started, control, timeout_s, max_output_bytes)
    finally:
        control.close(exited=proc.returncode is not None)


async def _supervise(
    proc: asyncio.subprocess.Process,
    argv: list[str],
    started: float,
    control: _Control,
    timeout_s: float,
    max_output_bytes: int,
) -> CommandResult:
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
            await _stop(proc, pgid, control)
        kill_group(pgid)  # children left running in the background do not outlive the call
        out, out_dropped, out_incomplete = await _collect(out_task)
        err, err_dropped, err_incomplete = await _collect(err_task)
    finally:
        if proc.returncode is None:  # cancelled from outside: nothing may keep running
            try:
                await asyncio.shield(_stop(proc, pgid, control))
            except asyncio.CancelledError:
                pass
        for task in (out_task, err_task):
            task.cancel()
    duration = time.monotonic() - started
    return CommandResult(
        argv=argv,
        exit_code=control.exit_code(proc.returncode, stopped=timed_out),
        verdict=control.verdict(),
        stdout=_text("stdout", out, out_dropped, max_output_bytes, out_incomplete),
        stderr=_text("stderr", err, err_dropped, max_output_bytes, err_incomplete),
        duration_s=round(duration, 3),
        timed_out=timed_out,
        stdout_truncated=bool(out_dropped) or out_incomplete,
        stderr_truncated=bool(err_dropped) or err_incomplete,
    )
