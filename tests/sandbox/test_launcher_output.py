"""The launcher's exit status is certain whatever becomes of its own lines.

Its own output — the probe's ``landlock_abi N`` on stdout, a setup failure's one line, "cannot run"
on stderr — is written best effort straight to the descriptor (``_supervisor.say``). Before, a
closed stdout or stderr (``sys.stdout`` None: AttributeError, exit 1) or a broken pipe (the flush
at exit failing: exit 120) changed the status a caller reads: 125 (setup
failed), 127 (not found), 0 (the probe ran). Each with the real launcher, as root and unprivileged;
the same launch with a working output is the positive control (same status, and the line is there).
"""

from __future__ import annotations

import os
import subprocess

import pytest

from reyn_sandbox import Grants

from .conftest import QUIET, TIMEOUT, Sandbox

BROKEN = ("closed", "broken-pipe")  # a full device (/dev/full) is refused as any device


def _launch(argv: list[str], which: int, kind: str) -> tuple[int, bytes]:
    """Run ``argv`` with its descriptor ``which`` (1 or 2) closed, a pipe nobody reads
    (``broken-pipe``) or a pipe read here (``working``): its status and what that pipe received."""
    name = "stdout" if which == 1 else "stderr"
    if kind == "closed":  # the shell closes it, then becomes the launcher
        argv = ["/bin/sh", "-c", f'exec "$@" {which}>&-', "sh", *argv]
        done = subprocess.run(argv, cwd="/", env={"PATH": "/usr/bin:/bin"}, timeout=TIMEOUT, **QUIET)
        return done.returncode, b""
    read_end, write_end = os.pipe()
    if kind == "broken-pipe":
        os.close(read_end)
    try:
        process = subprocess.Popen(argv, cwd="/", env={"PATH": "/usr/bin:/bin"}, **{**QUIET, name: write_end})  # type: ignore[arg-type]  # fmt: skip
    finally:
        os.close(write_end)
    received = b""
    if kind == "working":
        with os.fdopen(read_end, "rb") as reader:
            received = reader.read()
    return process.wait(timeout=TIMEOUT), received


def _probe(sandbox: Sandbox) -> list[str]:
    argv = sandbox.argv(["/bin/true"], Grants())
    return [*argv[: argv.index("--grants")], "--probe"]


@pytest.mark.parametrize("kind", BROKEN)
def test_the_probe_exits_0_whatever_its_stdout(sandbox: Sandbox, kind: str) -> None:
    assert _launch(_probe(sandbox), 1, kind) == (0, b"")
    code, line = _launch(_probe(sandbox), 1, "working")  # positive control
    assert code == 0 and line.startswith(b"landlock_abi "), line


@pytest.mark.parametrize("kind", BROKEN)
def test_a_setup_failure_exits_125_whatever_its_stderr(sandbox: Sandbox, kind: str) -> None:
    argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), pass_fds=(987,))  # 987: not open
    assert _launch(argv, 2, kind) == (125, b"")
    code, line = _launch(argv, 2, "working")  # positive control
    assert (code, line) == (125, b"reyn-sandbox: --pass-fds: descriptor 987 is not open in the launcher\n")


@pytest.mark.parametrize("kind", BROKEN)
def test_a_command_not_found_exits_127_whatever_its_stderr(sandbox: Sandbox, kind: str) -> None:
    argv = sandbox.argv(["/nonexistent/command"], Grants())
    assert _launch(argv, 2, kind) == (127, b"")
    code, line = _launch(argv, 2, "working")  # positive control
    assert (code, line) == (
        127,
        b"reyn-sandbox: cannot run /nonexistent/command: No such file or directory\n",
    )


@pytest.mark.parametrize("kind", BROKEN)
def test_the_commands_own_status_passes_whatever_the_launchers_outputs(sandbox: Sandbox, kind: str) -> None:
    argv = sandbox.argv(["/bin/sh", "-c", "exit 7"], Grants())
    assert _launch(argv, 1, kind)[0] == 7
    assert _launch(argv, 2, kind)[0] == 7
