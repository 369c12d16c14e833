"""Every descriptor the command inherits passes one rule: ``--pass-fds`` ones as 0, 1, 2 (issue 24).

A descriptor named by ``launcher_argv(pass_fds=)`` reaches the command as it is, and
``/proc/self/fd/N`` reopens the object under it past every cover the grants build: an ``O_PATH``
descriptor of a hidden file, or one opened write-only, was read back by the command. The launcher
now checks each named descriptor with the rule of 0-2 (``_descriptors.check_handed``): refused with
125 and one line naming ``--pass-fds`` and the descriptor, nothing started. A pipe and a socketpair
end are handed on (the positive controls; a file in any mode is refused: test_handed_kinds.py). The
real launcher, as root and unprivileged.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import Grants

from .conftest import SECRET, TIMEOUT, Sandbox

# The command reads the secret back through the descriptor it was handed, then says it ran.
READ_BACK = "cat /proc/self/fd/{fd}; cat sec/k; echo end"


def _passing(
    sandbox: Sandbox, command: list[str], grants: Grants, cwd: Path, fd: int
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sandbox.argv(command, grants, pass_fds=(fd,)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=str(cwd),
        env={"PATH": "/usr/bin:/bin"},
        pass_fds=(fd,),
    )


@pytest.mark.parametrize(
    ("how", "flags", "words"),
    [
        ("o_path", os.O_PATH, "an O_PATH descriptor"),
        ("write_only", os.O_WRONLY | os.O_APPEND, "a file"),
        ("read_only", os.O_RDONLY, "a file"),
    ],
)
def test_a_hidden_file_passed_through_pass_fds_is_refused(
    sandbox: Sandbox, hidden: tuple[Path, Grants], how: str, flags: int, words: str
) -> None:
    """The attack: ``sec/k`` hidden by the grants, a descriptor onto it named in ``--pass-fds``; the
    command reads ``/proc/self/fd/N``. Before, the secret came back (an ``O_PATH`` or write-only
    descriptor reopened for reading past the cover). Now: 125 before anything starts, one line naming
    the option and the descriptor, the secret never on the command's output. A read-only one is
    refused by the same rule (it is the secret already: the grants hid the file)."""
    secret, grants = hidden
    fd = os.open(secret, flags)
    try:
        result = _passing(
            sandbox, ["/bin/sh", "-c", READ_BACK.format(fd=fd)], grants, secret.parent.parent, fd
        )
    finally:
        os.close(fd)
    assert result.returncode == reyn_sandbox.SETUP_FAILED_EXIT, (result.stdout, result.stderr)
    assert SECRET not in result.stdout and "end" not in result.stdout  # nothing started
    assert result.stderr.startswith(f"reyn-sandbox: --pass-fds: descriptor {fd} is {words}: ")
    assert f"/proc/self/fd/{fd}" in result.stderr and len(result.stderr.splitlines()) == 1
    assert secret.read_text() == SECRET  # nothing written into it either


def test_a_directory_passed_through_pass_fds_is_refused(
    sandbox: Sandbox, hidden: tuple[Path, Grants]
) -> None:
    """The hidden folder itself, opened as a directory: refused as on 0-2 (its entries would be
    reachable through ``/proc/self/fd/N/``)."""
    secret, grants = hidden
    fd = os.open(secret.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        command = ["/bin/sh", "-c", f"cat /proc/self/fd/{fd}/k; echo end"]
        result = _passing(sandbox, command, grants, secret.parent.parent, fd)
    finally:
        os.close(fd)
    assert result.returncode == reyn_sandbox.SETUP_FAILED_EXIT and SECRET not in result.stdout
    assert f"--pass-fds: descriptor {fd} is a directory" in result.stderr


# The command writes to the descriptor it was handed (and first prints what it reads there, if asked).
WRITE_TO = """import os, sys
fd = int(sys.argv[1])
if sys.argv[3] == "read":
    print(os.read(fd, 100).decode(), end="")
os.write(fd, sys.argv[2].encode())
try:
    print(open("sec/k").read(), end="")
except OSError:
    pass  # the cover: nothing to read
"""


def test_control_a_pipe_and_a_socketpair_are_handed_on(sandbox: Sandbox, hidden: tuple[Path, Grants]) -> None:
    """The legitimate hand-offs, with the same hidden grants: the command writes to a passed pipe and
    to one end of a socketpair; each reaches the caller. The cover still holds (``sec/k`` gives
    nothing inside)."""
    secret, grants = hidden
    ws = secret.parent.parent
    pipe_r, pipe_w = os.pipe()
    mine, theirs = socket.socketpair()

    def handing(fd: int, text: str) -> subprocess.CompletedProcess[str]:
        return _passing(sandbox, [sandbox.python, "-c", WRITE_TO, str(fd), text, "-"], grants, ws, fd)

    try:
        piped = handing(pipe_w, "piped\n")
        os.close(pipe_w)
        socketed = handing(theirs.fileno(), "socketed\n")
        theirs.close()
        through_pipe = os.read(pipe_r, 100)
        through_socket = mine.recv(100)
    finally:
        os.close(pipe_r)
        mine.close()
    done = [(r.returncode, r.stderr) for r in (piped, socketed)]
    assert done == [(0, "")] * 2, done
    assert through_pipe == b"piped\n" and through_socket == b"socketed\n"
    assert piped.stdout == socketed.stdout == ""  # the cover holds
