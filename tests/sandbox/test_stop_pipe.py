"""``reyn_sandbox.StopPipe``: the caller's side of ``--stop-fd``, one for every caller (issue 24).

``stop()`` ends the whole sandbox — a double-forked grandchild in a session of its own included —
even while a process forked from the caller holds a copy of the write end (the byte, not only the
close), and the launcher exits ``128 + 9`` only once the kernel has reaped every process of it.
Positive control: a launch whose pipe is not stopped runs the command to its own end. The real
launcher, as root and unprivileged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from reyn_sandbox import Grants, StopPipe

from .conftest import DOUBLE_FORK, QUIET, TIMEOUT, Sandbox


def _launch(sandbox: Sandbox, stop: StopPipe, report_w: int, wait: str) -> subprocess.Popen[bytes]:
    assert stop.launcher_fd is not None
    code = DOUBLE_FORK.replace("time.sleep(0.5)\n", f"time.sleep({wait})\n")
    argv = sandbox.argv([sandbox.python, "-c", code, str(report_w)], Grants(), [report_w], stop.launcher_fd)
    launcher = subprocess.Popen(
        argv, pass_fds=[report_w, stop.launcher_fd], env={"PATH": "/usr/bin:/bin"}, cwd="/", **QUIET
    )
    stop.launched()
    assert stop.launcher_fd is None
    return launcher


@pytest.mark.parametrize("stopped", [True, False], ids=["stopped", "control"])
def test_stop_ends_the_sandbox_while_a_fork_of_the_caller_holds_the_pipe(
    sandbox: Sandbox, stopped: bool
) -> None:
    """Stopped: the whole sandbox ends, the launcher exits 137. Control: not stopped, the command runs
    to its own end (it sleeps 0 s) and the launcher exits with its status, 0."""
    report_r, report_w = os.pipe()
    stop = StopPipe()
    try:
        launcher = _launch(sandbox, stop, report_w, "3600" if stopped else "0")
        os.close(report_w)
        with os.fdopen(report_r, "rb", closefd=False) as reports:
            line = reports.readline()  # the control's grandchild may be killed before it writes
            assert line == b"grandchild-alive\n" or (not stopped and line == b"")  # the sandbox runs
        holder = os.fork()  # a copy of the write end in a process forked from the caller
        if holder == 0:
            os.read(report_r, 1)  # until the sandbox is gone (EOF), then exit
            os._exit(0)
        if stopped:
            stop.stop()
            stop.stop()  # once is enough; again is nothing
        assert launcher.wait(timeout=TIMEOUT) == (128 + 9 if stopped else 0)
        assert os.read(report_r, 100) == b""  # every process of the sandbox is gone with it
        assert os.waitpid(holder, 0)[1] == 0
    finally:
        stop.stop()
        os.close(report_r)


# A caller with SIGPIPE at its default (as many command-line programs set it), given the launcher's
# argv prefix (the runner's): it stops, or only closes, a launch whose launcher has exited.
DEFAULT_SIGPIPE_CALLER = """
import json, signal, subprocess, sys
from reyn_sandbox import Grants, StopPipe, launcher_argv
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
prefix, how = json.loads(sys.argv[1]), sys.argv[2]
stop = StopPipe()
argv = launcher_argv(["/bin/true"], Grants(), stop_fd=stop.launcher_fd)
launcher = subprocess.run([*prefix, *argv[1:]] if prefix else argv, pass_fds=[stop.launcher_fd],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=60)
stop.launched()
getattr(stop, how)()
print("caller-alive", launcher.returncode)
"""


@pytest.mark.parametrize("how", ["stop", "close"])
def test_stopping_after_the_launcher_exited_never_kills_the_caller_by_sigpipe(
    sandbox: Sandbox, how: str
) -> None:
    """The launcher is gone, so the pipe has no reader: the stop byte would raise SIGPIPE in the
    caller, which dies of it (exit -13) where SIGPIPE is at its default. ``stop()`` blocks and
    consumes it; ``close()`` (the launcher waited for) writes nothing. The caller prints and exits 0,
    the launch itself ran (the positive control: its status 0)."""
    prefix = [] if sandbox.runner == "root" else sandbox.argv(["/bin/true"], Grants())[:5]
    caller = subprocess.run(
        [sys.executable, "-c", DEFAULT_SIGPIPE_CALLER, json.dumps(prefix), how],
        capture_output=True, text=True, timeout=TIMEOUT, env={"PATH": "/usr/bin:/bin"}, cwd="/",
    )  # fmt: skip
    assert (caller.returncode, caller.stdout) == (0, "caller-alive 0\n"), caller.stderr
