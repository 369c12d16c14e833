"""The launcher's ``--stop-fd`` (``launcher_argv(..., stop_fd=)``): the read end of a pipe whose write
end the caller keeps. The caller writing to it, closing it, or dying (its descriptors close with it)
ends the whole sandbox — a double-forked grandchild in a session of its own included — and the
launcher exits only once the kernel has reaped every process of it. Each with the real launcher, as
root and unprivileged; the same setup with the pipe left open runs the command to its own end (the
positive control).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import QUIET, TIMEOUT, Sandbox

# DOUBLE_FORK, but the command waits until its grandchild has reported (a pipe of their own: without
# it, a command that exits at once could end the sandbox before the grandchild wrote a byte), then
# sleeps for its second argument's seconds and exits 7. Both it and its grandchild hold the report
# pipe's write end: EOF on it means every process of the sandbox is gone.
SLEEPERS = (
    "import os, sys, time\n"
    "fd = int(sys.argv[1])\n"
    "ready_r, ready_w = os.pipe()\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.write(fd, b'grandchild-alive\\n'); os.write(ready_w, b'x'); time.sleep(3600)\n"
    "    os._exit(0)\n"
    "os.close(ready_w); os.wait(); os.read(ready_r, 1)\n"
    "time.sleep(float(sys.argv[2])); sys.exit(7)\n"
)


def _read_within(fd: int, seconds: float) -> bytes | None:
    """What ``fd`` gives within ``seconds`` (``b""`` at EOF), or None when it is not readable by then."""
    ready, _, _ = select.select([fd], [], [], seconds)
    return os.read(fd, 1000) if ready else None


@contextmanager
def _pipes() -> Iterator[tuple[int, int, int, int]]:
    """(report read, report write, stop read, stop write), each closed at the end if still open."""
    fds = [*os.pipe(), *os.pipe()]
    try:
        yield fds[0], fds[1], fds[2], fds[3]
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


def _start(sandbox: Sandbox, report_w: int, stop_r: int, sleep_s: float = 3600) -> subprocess.Popen[bytes]:
    argv = sandbox.argv(
        [sandbox.python, "-c", SLEEPERS, str(report_w), str(sleep_s)], Grants(), [report_w], stop_fd=stop_r
    )
    return subprocess.Popen(
        argv, pass_fds=[report_w, stop_r], env={"PATH": "/usr/bin:/bin"}, cwd="/", **QUIET
    )


@pytest.mark.parametrize("how", ["close", "write"])
def test_the_stop_pipe_ends_the_whole_sandbox_before_the_launcher_exits(sandbox: Sandbox, how: str) -> None:
    with _pipes() as (report_r, report_w, stop_r, stop_w):
        launcher = _start(sandbox, report_w, stop_r)
        os.close(report_w)
        os.close(stop_r)
        alive = _read_within(report_r, TIMEOUT)
        running = launcher.poll() is None  # positive control: with the pipe open, it runs on
        if how == "close":
            os.close(stop_w)
        else:
            os.write(stop_w, b"x")
        code = launcher.wait(TIMEOUT)
        # No wait here: the launcher exits only once the kernel has reaped the whole sandbox.
        after = _read_within(report_r, 0)
    assert alive == b"grandchild-alive\n" and running
    assert code == 128 + 9
    assert after == b""


def test_with_the_stop_pipe_open_the_command_ends_on_its_own(sandbox: Sandbox) -> None:
    with _pipes() as (report_r, report_w, stop_r, _stop_w):
        launcher = _start(sandbox, report_w, stop_r, sleep_s=0)
        os.close(report_w)
        os.close(stop_r)
        code = launcher.wait(TIMEOUT)
        output = _read_within(report_r, TIMEOUT)
        rest = _read_within(report_r, TIMEOUT)
    assert code == 7  # the command's own status, the stop pipe left open
    assert output == b"grandchild-alive\n" and rest == b""  # its grandchild still ends with it


CALLER = """
import os, subprocess, sys, time
argv, report_w, stop_fd, then = sys.argv[1:-3], int(sys.argv[-3]), int(sys.argv[-2]), sys.argv[-1]
stop_r, stop_w = os.pipe()
os.dup2(stop_r, stop_fd)  # the number the launcher's argv names
os.close(stop_r)
subprocess.Popen(argv, pass_fds=[report_w, stop_fd], env={"PATH": "/usr/bin:/bin"}, cwd="/",
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(stop_fd)
if then == "exit":
    os._exit(0)  # at once: the launcher may not even have started yet
print("started", flush=True)
time.sleep(3600)
"""
STOP_FD = 77
Result = subprocess.CompletedProcess[str]


@pytest.mark.parametrize("when", ["while running", "before the launcher starts"])
def test_the_callers_death_ends_the_sandbox(sandbox: Sandbox, when: str) -> None:
    """The caller killed (or gone before the launcher could arm ``PR_SET_PDEATHSIG``): its end of
    the pipe closes with it, so nothing of the sandbox survives it."""
    report_r, report_w = os.pipe()
    try:
        argv = sandbox.argv([sandbox.python, "-c", SLEEPERS, str(report_w), "3600"], Grants(), [report_w],
                            stop_fd=STOP_FD)  # fmt: skip
        then = "sleep" if when == "while running" else "exit"
        caller = subprocess.Popen([sys.executable, "-c", CALLER, *argv, str(report_w), str(STOP_FD), then],
                                  pass_fds=[report_w], stdout=subprocess.PIPE)  # fmt: skip
        os.close(report_w)
        if then == "sleep":
            alive = _read_within(report_r, TIMEOUT)  # positive control: it runs while the caller lives
            caller.kill()
        else:
            alive = b"grandchild-alive\n"
        caller.wait(TIMEOUT)
        assert caller.stdout is not None
        caller.stdout.close()
        after = _read_within(report_r, TIMEOUT)
        if after == b"grandchild-alive\n":  # started before the caller's exit was seen: then gone
            after = _read_within(report_r, TIMEOUT)
    finally:
        os.close(report_r)
    assert alive == b"grandchild-alive\n"
    assert after == b""


def test_a_stop_pipe_closed_before_the_start_runs_nothing(sandbox: Sandbox) -> None:
    stop_r, stop_w = os.pipe()
    try:
        live = sandbox.run(["/bin/echo", "COMMAND-RAN"], Grants(), stop_fd=stop_r)  # positive control
        os.close(stop_w)
        stopped = sandbox.run(["/bin/echo", "COMMAND-RAN"], Grants(), stop_fd=stop_r)
    finally:
        os.close(stop_r)
    assert live.returncode == 0 and live.stdout == "COMMAND-RAN\n", live.stderr
    assert stopped.returncode == 125 and stopped.stdout == ""
    assert stopped.stderr == "reyn-sandbox: stopped through --stop-fd before the command started\n"


def test_the_command_never_gets_the_stop_descriptor(sandbox: Sandbox) -> None:
    stop_r, stop_w = os.pipe()
    try:
        listed = sandbox.run(["/bin/sh", "-c", "ls /proc/self/fd/ | tr '\\n' ' '"], Grants(), stop_fd=stop_r)
    finally:
        os.close(stop_r)
        os.close(stop_w)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["0", "1", "2", "3"]  # 3: ls's own listing


def _refused(
    sandbox: Sandbox, value: str, pass_fds: list[int], open_fds: list[int]
) -> subprocess.CompletedProcess[str]:
    argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), pass_fds)
    at = argv.index("--grants")
    argv[at:at] = ["--stop-fd", value]
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                          env={"PATH": "/usr/bin:/bin"}, pass_fds=open_fds)  # fmt: skip


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("not open", "--stop-fd: descriptor 987 is not open in the launcher"),
        ("a pipe's write end", "--stop-fd: descriptor {w} is not the read end of a pipe"),
        ("a file", "--stop-fd: descriptor {f} is not the read end of a pipe"),
        (
            "also passed to the command",
            "--stop-fd: descriptor {r} is also in --pass-fds; the command must not get it",
        ),
        ("two numbers", "--stop-fd takes one descriptor number, got '{r},{w}'"),
        ("not a descriptor number", "--stop-fd takes descriptor numbers from 3 to 2147483647"),
        ("given twice", "usage: python -m reyn_sandbox"),
    ],
)
def test_a_bad_stop_fd_is_refused_with_one_line_and_125(sandbox: Sandbox, case: str, message: str) -> None:
    read_end, write_end = os.pipe()
    file_fd = os.open("/etc/hostname" if os.path.exists("/etc/hostname") else "/dev/null", os.O_RDONLY)
    values = {
        "not open": ("987", []),
        "a pipe's write end": (str(write_end), []),
        "a file": (str(file_fd), []),
        "also passed to the command": (str(read_end), [read_end]),
        "two numbers": (f"{read_end},{write_end}", []),
        "not a descriptor number": ("2", []),
        "given twice": (f"{read_end} --stop-fd {read_end}", []),
    }
    value, passed = values[case]
    try:
        if case == "given twice":
            argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), stop_fd=read_end)
            at = argv.index("--grants")
            argv[at:at] = ["--stop-fd", str(read_end)]
            result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                                    env={"PATH": "/usr/bin:/bin"}, pass_fds=[read_end])  # fmt: skip
        else:
            result = _refused(sandbox, value, passed, [read_end, write_end, file_fd])
        # positive control: the read end of a pipe, given once and not passed on, runs the command
        control = _refused(sandbox, str(read_end), [], [read_end, write_end, file_fd])
    finally:
        for fd in (read_end, write_end, file_fd):
            os.close(fd)
    expected = "reyn-sandbox: " + message.format(r=read_end, w=write_end, f=file_fd)
    assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout, result.stderr
    assert result.stderr.startswith(expected), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert control.returncode == 0 and control.stdout == "COMMAND-RAN\n", control.stderr


@pytest.mark.parametrize("value", [2, -1, 2**31, True, "5", 5.0])
def test_launcher_argv_refuses_a_stop_fd_the_launcher_would_refuse(value: object) -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    with pytest.raises(GrantsError, match="stop_fd takes descriptor numbers from 3 to 2147483647"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), stop_fd=value)  # type: ignore[arg-type]
    assert "--stop-fd" in reyn_sandbox.launcher_argv(["/bin/true"], Grants(), stop_fd=5)  # positive control


def test_launcher_argv_refuses_a_stop_fd_it_also_passes_to_the_command() -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    with pytest.raises(GrantsError, match="stop_fd 5 is also in pass_fds"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(4, 5), stop_fd=5)
    argv = reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(4,), stop_fd=5)  # positive control
    assert argv[argv.index("--pass-fds") + 1] == "4" and argv[argv.index("--stop-fd") + 1] == "5"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("its write end passed to the command", "{r}'s pipe is also descriptor {w} (in --pass-fds)"),
        ("a copy of its read end passed", "{r}'s pipe is also descriptor {d} (in --pass-fds)"),
        ("its write end as the command's stdout", "{r}'s pipe is also descriptor 1 (one of the command's"),
        ("a copy of its read end as stdin", "{r}'s pipe is also descriptor 0 (one of the command's"),
        ("a named FIFO", "{f} is a named pipe (FIFO), not an anonymous one"),
    ],
)
def test_the_stop_pipe_is_compared_as_a_pipe_not_a_number(
    sandbox: Sandbox, tmp_path: Path, case: str, message: str
) -> None:
    """The command holding any end of the stop pipe, under any number, could keep it from ever
    hanging up (a write end) or eat the caller's stop byte (a read end): refused, as a FIFO anyone
    who reaches its path could open. Positive control: the same pipe, held by nothing the command
    gets, stops nothing and runs the command."""
    read_end, write_end = os.pipe()
    copy = os.dup(read_end)
    fifo = tmp_path / "stop.fifo"
    os.mkfifo(fifo)
    os.chmod(tmp_path, 0o755)
    fifo_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    open_fds = [read_end, write_end, copy, fifo_fd]
    stop, passed, stdin, stdout = {
        "its write end passed to the command": (read_end, [write_end], None, subprocess.PIPE),
        "a copy of its read end passed": (read_end, [copy], None, subprocess.PIPE),
        "its write end as the command's stdout": (read_end, [], None, write_end),
        "a copy of its read end as stdin": (read_end, [], copy, subprocess.PIPE),
        "a named FIFO": (fifo_fd, [], None, subprocess.PIPE),
    }[case]

    def launch(stop_fd: int, passed: list[int], stdin: int | None, stdout: int) -> Result:
        argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), passed, stop_fd=stop_fd)
        return subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True,
                              timeout=TIMEOUT, cwd="/", env={"PATH": "/usr/bin:/bin"},
                              pass_fds=open_fds)  # fmt: skip

    try:
        result = launch(stop, passed, stdin, stdout)
        leaked = _read_within(read_end, 0)  # nothing the command wrote went into the stop pipe
        control = launch(read_end, [], None, subprocess.PIPE)
    finally:
        for fd in open_fds:
            os.close(fd)
    shown = message.format(r=read_end, w=write_end, d=copy, f=fifo_fd)
    expected = f"reyn-sandbox: --stop-fd: descriptor {shown}"
    assert result.returncode == 125 and leaked is None, (result.stderr, leaked)
    assert result.stderr.startswith(expected), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert control.returncode == 0 and control.stdout == "COMMAND-RAN\n", control.stderr
