"""What the launcher accepts on descriptors 0, 1, 2 (``_descriptors.standard_descriptors``).

- A closed one is opened on the null device, checked as such on the open descriptor: a regular
  file bound over /dev/null (a mount namespace of the caller's) is refused (125), so the command's
  output never lands in it.
- Whatever sits on 0-2 reaches the command, and ``/proc/self/fd/N`` reopens the object under it
  past every cover the grants build: a file the grants hide, handed write-only as stderr, was read
  by the command. Only anonymous pipes, connected unix stream sockets and the null device are
  accepted; a file in any mode, a terminal, any other device, an ``O_PATH`` descriptor or a
  directory never (test_handed_kinds.py). Refused: 125, nothing started.

Each with the real launcher, as root and unprivileged, beside its positive control.
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

READ_BACK = "cat /proc/self/fd/2; echo end"


def _run_with(
    sandbox: Sandbox, command: list[str], grants: Grants, cwd: Path, **streams: int
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        sandbox.argv(command, grants),
        stdin=streams.get("stdin", subprocess.DEVNULL),
        stdout=streams.get("stdout", subprocess.PIPE),
        stderr=streams.get("stderr", subprocess.PIPE),
        timeout=TIMEOUT,
        cwd=str(cwd),
        env={"PATH": "/usr/bin:/bin"},
    )


def test_a_hidden_file_handed_write_only_as_stderr_is_refused(
    sandbox: Sandbox, hidden: tuple[Path, Grants]
) -> None:
    """The reviewer's reproduction: ``sec/k`` hidden by the grants, handed as the launcher's stderr
    opened write-only (``2>>sec/k``); the command reads ``/proc/self/fd/2``. Refused before anything
    starts (125, the reason on that stderr), the secret never on the command's stdout. Controls: the
    command sees the cover at ``sec/k`` itself; with a pipe as stderr it runs."""
    secret, grants = hidden
    fd = os.open(secret, os.O_WRONLY | os.O_APPEND)
    try:
        refused = _run_with(sandbox, ["/bin/sh", "-c", READ_BACK], grants, secret.parent.parent, stderr=fd)
    finally:
        os.close(fd)
    assert refused.returncode == reyn_sandbox.SETUP_FAILED_EXIT and SECRET.encode() not in refused.stdout
    assert b"end" not in refused.stdout  # nothing started
    said = secret.read_text()
    assert said.startswith(SECRET) and "descriptor 2 is a file:" in said
    assert "/proc/self/fd/2" in said
    # control: the same command with a pipe as stderr runs (reading its own pipe back gives nothing)
    ok = _run_with(sandbox, ["/bin/sh", "-c", "cat sec/k; echo end"], grants, secret.parent.parent)
    assert ok.returncode == 0 and ok.stdout.endswith(b"end\n") and SECRET.encode() not in ok.stdout


@pytest.mark.parametrize("which", ["o_path", "directory", "write_only_stdout", "read_only_stdin"])
def test_what_a_reopen_would_gain_on_is_refused(sandbox: Sandbox, area: Path, which: str) -> None:
    """An ``O_PATH`` descriptor (any object), a directory, a file opened only one way: refused (125;
    a directory already by the launcher's interpreter), the command not started, the reason naming
    the descriptor."""
    target = area / "write" / "out.txt"
    target.write_text("")
    target.chmod(0o666)
    opened = {
        "o_path": (2, os.open(target, os.O_PATH)),
        "directory": (1, os.open(area / "read", os.O_RDONLY | os.O_DIRECTORY)),
        "write_only_stdout": (1, os.open(target, os.O_WRONLY)),
        "read_only_stdin": (0, os.open(target, os.O_RDONLY)),
    }
    number, fd = opened.pop(which)
    for other in opened.values():
        os.close(other[1])
    stream = ("stdin", "stdout", "stderr")[number]
    try:
        result = _run_with(sandbox, ["/bin/echo", "ran"], Grants(), Path("/"), **{stream: fd})
    finally:
        os.close(fd)
    assert b"ran" not in (result.stdout or b"") and target.read_text() == ""
    if which == "directory":  # the launcher's interpreter refuses a directory as a stream itself
        assert result.returncode != 0
        return
    assert result.returncode == reyn_sandbox.SETUP_FAILED_EXIT
    if number != 2:
        words = {"o_path": "an O_PATH descriptor", "directory": "a directory"}
        expected = words.get(which, "a file")
        assert f"descriptor {number} is {expected}".encode() in result.stderr, result.stderr


def test_control_pipes_a_socketpair_and_null_are_handed_on(sandbox: Sandbox) -> None:
    """What Reyn's own spawn sites hand (pipes, /dev/null) and a socketpair end work."""
    left, right = socket.socketpair()
    try:
        to_socket = _run_with(
            sandbox, ["/bin/echo", "to the socket"], Grants(), Path("/"), stdout=left.fileno()
        )
        left.close()
        got = right.recv(100)
    finally:
        right.close()
    piped = _run_with(sandbox, ["/bin/echo", "piped"], Grants(), Path("/"))
    assert (to_socket.returncode, piped.returncode) == (0, 0), to_socket.stderr
    assert got == b"to the socket\n" and piped.stdout == b"piped\n"


def test_a_file_bound_over_dev_null_is_not_opened_onto_a_closed_descriptor(
    sandbox: Sandbox, area: Path
) -> None:
    """A mount namespace whose /dev/null is a regular file (bound over it), the launcher started
    with 1 closed: refused (125, said on 2), the command's output not in the file. Control: the
    same namespace with 1 left open (nothing to open on /dev/null) runs the command."""
    if os.geteuid() != 0:
        pytest.skip("binding over /dev/null needs a mount namespace of root's")
    fake = area / "write" / "fake-null"
    fake.write_text("")
    fake.chmod(0o666)
    argv = sandbox.argv(["/bin/echo", "lands"], Grants())

    def started(close: str) -> subprocess.CompletedProcess[bytes]:
        script = f'mount --bind "$0" /dev/null && exec "$@" {close}'
        command = ["unshare", "-m", "/bin/sh", "-c", script, str(fake), *argv]
        return subprocess.run(
            command, capture_output=True, timeout=TIMEOUT, cwd="/", env={"PATH": "/usr/bin:/bin"}
        )

    refused = started("1>&-")
    assert refused.returncode == reyn_sandbox.SETUP_FAILED_EXIT, refused.stderr
    assert b"/dev/null is not the null device" in refused.stderr and fake.read_text() == ""
    control = started("")
    assert control.returncode == 0 and control.stdout == b"lands\n", control.stderr
