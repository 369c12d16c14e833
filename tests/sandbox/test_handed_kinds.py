"""Only a few kinds of descriptor may be inherited by the command: 0, 1, 2 and ``--pass-fds`` alike.

A descriptor reaches the command as it is. Before, a file opened for reading and writing was
accepted, and through it the command changed the host file's metadata (``fchmod`` to 04777, times,
extended attributes — Landlock does not govern metadata); a terminal let it push input with
``TIOCSTI`` (and take it as its controlling terminal); a UDP socket made in the caller's network
namespace sent datagrams out with ``network=False``. Now the launcher accepts only an anonymous pipe,
the null device and a connected unix stream socket (with the network granted, an internet stream or
datagram socket too); the rest is refused with 125 before anything starts, one line saying what may
be handed. Positive controls: a pipe, a socketpair end and /dev/null are handed on; a UDP socket is
with the network granted. The real launcher, as root and unprivileged.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import Grants

from .conftest import TIMEOUT, Sandbox

# The command tries to change its descriptor's metadata, then says it ran.
METADATA = """import os, sys
fd = int(sys.argv[1])
for change in (lambda: os.chmod(fd, 0o4777), lambda: os.utime(fd, (0, 0))):
    try:
        change()
    except OSError:
        pass
print("ran")
"""


def _handing(
    sandbox: Sandbox, fd: int, code: str, grants: Grants, stream: str = ""
) -> subprocess.CompletedProcess[str]:
    """``code`` run confined, given ``fd`` (its number as ``sys.argv[1]``) as ``--pass-fds`` or, with
    ``stream``, as that standard stream."""
    number = {"stdin": 0, "stdout": 1, "stderr": 2}.get(stream, fd)
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    if stream:
        streams[stream] = fd
    passed = () if stream else (fd,)
    return subprocess.run(
        sandbox.argv([sandbox.python, "-c", code, str(number)], grants, pass_fds=passed),
        text=True, timeout=TIMEOUT, cwd="/", env={"PATH": "/usr/bin:/bin"}, pass_fds=passed, **streams,
    )  # fmt: skip


def _refused(result: subprocess.CompletedProcess[str], fd: int, words: str) -> None:
    assert result.returncode == reyn_sandbox.SETUP_FAILED_EXIT, (result.stdout, result.stderr)
    assert "ran" not in (result.stdout or "")  # nothing started
    said = result.stderr or ""
    if said:  # stderr is the handed descriptor itself in the stderr case
        assert f"descriptor {fd} is {words}" in said and "may inherit only" in said, said


@pytest.mark.parametrize("stream", ["", "stdout", "stderr", "stdin"])
def test_a_read_write_file_is_refused_so_its_metadata_stays(
    sandbox: Sandbox, area: Path, stream: str
) -> None:
    """The attack: a host file opened read-write handed on; the command ``fchmod``s it setuid and
    world-writable and zeroes its times. Refused (125); the file's mode and times unchanged."""
    target = area / "write" / "host-file.txt"
    target.write_text("host\n")
    target.chmod(0o644)
    fd = os.open(target, os.O_RDWR)
    try:
        result = _handing(sandbox, fd, METADATA, Grants(), stream)
    finally:
        os.close(fd)
    _refused(result, {"stdin": 0, "stdout": 1, "stderr": 2}.get(stream, fd), "a file")
    after = target.stat()
    assert stat.S_IMODE(after.st_mode) == 0o644 and after.st_mtime > 0  # (the refusal may be written there)


def test_a_terminal_is_refused(sandbox: Sandbox) -> None:
    """A pseudo-terminal opened read-write, no session's controlling terminal, as stdin: the command
    would ``setsid`` + ``TIOCSCTTY`` it and push input with ``TIOCSTI``. Refused (125)."""
    leader, follower = os.openpty()
    code = (
        "import fcntl, os, termios\n"
        "if os.fork() == 0:\n"
        "    os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); fcntl.ioctl(0, termios.TIOCSTI, b'x')\n"
        "    os._exit(0)\n"
        "os.wait(); print('ran')\n"
    )
    try:
        result = _handing(sandbox, follower, code, Grants(), "stdin")
    finally:
        os.close(follower)
        os.close(leader)
    _refused(result, 0, "a terminal")


def _udp_to(port: int) -> str:
    return (
        "import socket, sys\n"
        "s = socket.socket(fileno=int(sys.argv[1]))\n"
        f"s.sendto(b'out', ('127.0.0.1', {port})); print('ran')\n"
    )


@pytest.mark.parametrize("network", [False, True], ids=["no-network", "network-control"])
def test_an_internet_socket_is_handed_only_with_the_network(sandbox: Sandbox, network: bool) -> None:
    """The attack: a UDP socket made in the caller's network namespace, handed with ``network=False``;
    the command sends a datagram to a host port. Refused (125), nothing received. Control: with the
    network granted the same hand-off is what the command could do itself — it runs and the datagram
    arrives."""
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as server,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as handed,
    ):
        server.bind(("127.0.0.1", 0))
        server.settimeout(0 if not network else TIMEOUT)
        result = _handing(sandbox, handed.fileno(), _udp_to(server.getsockname()[1]), Grants(network=network))
        if network:
            assert (result.returncode, result.stdout) == (0, "ran\n"), result.stderr
            assert server.recv(10) == b"out"
            return
        _refused(result, handed.fileno(), "an internet socket")
        with pytest.raises(BlockingIOError):
            server.recv(10)


@pytest.mark.parametrize("kind", ["datagram", "listening", "unconnected"])
def test_a_unix_socket_that_could_reach_others_is_refused(sandbox: Sandbox, kind: str) -> None:
    """A unix datagram socket (it can address any socket of the caller's namespace), a listening one
    (it accepts connections from outside), one connected to nothing: refused (125)."""
    if kind == "datagram":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if kind == "listening":
            sock.bind(f"\0reyn-test-listening-{os.getpid()}")
            sock.listen()
    words = {"datagram": "a unix datagram socket", "listening": "a listening unix socket",
             "unconnected": "a unix socket connected to nothing"}[kind]  # fmt: skip
    with sock:
        result = _handing(sandbox, sock.fileno(), "print('ran')", Grants())
        _refused(result, sock.fileno(), words)


def test_control_a_pipe_a_socketpair_end_and_null_are_handed_on(sandbox: Sandbox) -> None:
    """The legitimate hand-offs: a pipe's write end, a socketpair end (``--pass-fds``), /dev/null."""
    read_end, write_end = os.pipe()
    mine, theirs = socket.socketpair()
    null = os.open(os.devnull, os.O_WRONLY)
    write = "import os, sys; os.write(int(sys.argv[1]), b'hello'); print('ran')"
    try:
        piped = _handing(sandbox, write_end, write, Grants())
        socketed = _handing(sandbox, theirs.fileno(), write, Grants())
        nulled = _handing(sandbox, null, write, Grants(), "stderr")
        got = os.read(read_end, 10), mine.recv(10)
    finally:
        for fd in (read_end, write_end, null):
            os.close(fd)
        mine.close()
        theirs.close()
    assert [(r.returncode, r.stdout) for r in (piped, socketed, nulled)] == [(0, "ran\n")] * 3
    assert got == (b"hello", b"hello")
