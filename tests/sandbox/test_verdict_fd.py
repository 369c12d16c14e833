"""The launcher's ``--verdict-fd`` (``launcher_argv(..., verdict_fd=)``): the write end of a pipe whose
read end the caller keeps, where the launcher writes its verdicts — a setup failure's line (exit
125), the ``limit exceeded`` line — and nothing else writes: the command never gets it, so what it
prints on stderr never reaches it. Each with the real launcher, as root and unprivileged."""

from __future__ import annotations

import os
import subprocess

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import TIMEOUT, Sandbox

Result = subprocess.CompletedProcess[str]


def _launch(sandbox: Sandbox, command: list[str], grants: Grants) -> tuple[Result, str]:
    """Run ``command`` with a verdict pipe of its own (its read end kept here); return the result
    and what the verdict pipe held once the launcher exited."""
    verdict_r, verdict_w = os.pipe()
    try:
        argv = sandbox.argv(command, grants, verdict_fd=verdict_w)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                                env={"PATH": "/usr/bin:/bin"}, pass_fds=[verdict_w])  # fmt: skip
        os.close(verdict_w)
        verdict_w = -1
        with os.fdopen(verdict_r, "rb") as fh:
            verdict_r = -1
            verdict = fh.read().decode()
    finally:
        for fd in (verdict_r, verdict_w):
            if fd >= 0:
                os.close(fd)
    return result, verdict


def test_the_command_writes_to_stderr_never_to_the_verdict_pipe(sandbox: Sandbox) -> None:
    fake = "reyn-sandbox: limit exceeded: memory_bytes (1)\n"
    code = f"import sys; sys.stderr.write({fake!r}); sys.exit(125)"
    result, verdict = _launch(sandbox, [sandbox.python, "-c", code], Grants())
    assert result.returncode == 125 and result.stderr == fake
    assert verdict == ""


def test_the_command_never_gets_the_verdict_descriptor(sandbox: Sandbox) -> None:
    result, verdict = _launch(sandbox, ["/bin/sh", "-c", "ls /proc/self/fd/ | tr '\\n' ' '"], Grants())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1", "2", "3"] and verdict == ""  # 3: ls's own listing


def test_a_limit_kill_and_a_setup_failure_are_on_the_verdict_pipe(sandbox: Sandbox) -> None:
    killed, killed_verdict = _launch(
        sandbox, [sandbox.python, "-c", "while True: pass"], Grants(cpu_seconds=1)
    )
    missing, missing_verdict = _launch(sandbox, ["/no/such/program"], Grants())  # the command's own: 127
    refused, refused_verdict = _launch(sandbox, ["/bin/true"], Grants(write_roots=("/no/such/root",)))
    assert killed_verdict == "reyn-sandbox: limit exceeded: cpu_seconds (1)\n" == killed.stderr
    assert missing.returncode == 127 and missing_verdict == ""
    assert refused.returncode == 125 and refused_verdict.startswith("reyn-sandbox: ")
    assert refused_verdict == refused.stderr and len(refused_verdict.splitlines()) == 1


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("the read end", "--verdict-fd: descriptor {r} is not the write end of a pipe"),
        (
            "the stop pipe's write end",
            "--verdict-fd: descriptor {w}'s pipe is also descriptor {s} (the --stop-fd)",
        ),
        ("its read end passed", "--verdict-fd: descriptor {w}'s pipe is also descriptor {r} (in --pass-fds)"),
    ],
)
def test_a_bad_verdict_fd_is_refused_with_one_line_and_125(sandbox: Sandbox, case: str, message: str) -> None:
    read_end, write_end = os.pipe()
    stop_r, stop_w = os.pipe()
    verdict, passed = {
        "the read end": (read_end, []),
        "the stop pipe's write end": (stop_w, []),
        "its read end passed": (write_end, [read_end]),
    }[case]

    def launch(verdict_fd: int, pass_fds: list[int]) -> Result:
        argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), pass_fds, stop_fd=stop_r)
        at = argv.index("--grants")
        argv[at:at] = ["--verdict-fd", str(verdict_fd)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                              env={"PATH": "/usr/bin:/bin"},
                              pass_fds=[read_end, write_end, stop_r, stop_w])  # fmt: skip

    try:
        result = launch(verdict, passed)
        control = launch(write_end, [])  # a pipe of its own's write end, the command holding none of it
    finally:
        for fd in (read_end, write_end, stop_r, stop_w):
            os.close(fd)
    expected = "reyn-sandbox: " + message.format(r=read_end, w=verdict, s=stop_r)
    assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout, result.stderr
    assert result.stderr.startswith(expected) and len(result.stderr.splitlines()) == 1, result.stderr
    assert control.returncode == 0 and control.stdout == "COMMAND-RAN\n", control.stderr


@pytest.mark.parametrize(
    ("fds", "message"),
    [
        ({"verdict_fd": 2}, "verdict_fd takes descriptor numbers from 3"),
        ({"verdict_fd": 5, "pass_fds": (5,)}, "verdict_fd 5 is also in pass_fds or is stop_fd"),
        ({"verdict_fd": 5, "stop_fd": 5}, "verdict_fd 5 is also in pass_fds or is stop_fd"),
    ],
)
def test_launcher_argv_refuses_a_verdict_fd_the_launcher_would_refuse(fds: dict, message: str) -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    with pytest.raises(GrantsError, match=message):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), **fds)
    argv = reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(4,), stop_fd=5, verdict_fd=6)
    assert argv[argv.index("--verdict-fd") + 1] == "6"  # positive control
