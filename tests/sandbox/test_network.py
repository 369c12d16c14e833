"""Sockets: without network no internet socket exists, unix sockets reach nothing outside the roots."""

from __future__ import annotations

import os
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reyn_sandbox import Grants

from .conftest import Sandbox

TCP_SEND = (
    "import socket, sys\n"
    "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n"
    "s.sendall(b'tcp-from-sandbox'); s.close(); print('sent')\n"
)
UDP_SEND = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "s.sendto(b'udp-from-sandbox', ('127.0.0.1', int(sys.argv[1]))); print('sent')\n"
)
UNIX_CONNECT = (
    "import socket, sys\n"
    "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5)\n"
    "s.connect(sys.argv[1]); s.sendall(b'unix-from-sandbox'); s.close(); print('sent')\n"
)


class Listener:
    """A real socket on the host side that records what arrives (bounded: it stops by itself)."""

    def __init__(self, sock: socket.socket, stream: bool) -> None:
        self.sock = sock
        self.received: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, args=(stream,), daemon=True)
        sock.settimeout(30)
        if stream:
            sock.listen(4)
        self._thread.start()

    def _serve(self, stream: bool) -> None:
        try:
            while True:
                if stream:
                    conn, _ = self.sock.accept()
                    with conn:
                        conn.settimeout(5)
                        self.received.append(conn.recv(100))
                else:
                    self.received.append(self.sock.recv(100))
        except OSError:
            return

    def close(self) -> None:
        # What the peer completed may still wait to be taken (a connection in the backlog, a datagram
        # in the buffer) when its process has already exited: on a loaded machine this thread may not
        # have run yet, and closing now would drop it. Let it take what is there (bounded), then close.
        deadline = time.monotonic() + 5
        while (
            self.sock.fileno() >= 0
            and time.monotonic() < deadline
            and select.select([self.sock], [], [], 0)[0]
        ):
            time.sleep(0.01)
        self.sock.close()
        self._thread.join(timeout=5)


@pytest.fixture(params=["tcp", "udp"])
def inet(request: pytest.FixtureRequest) -> Iterator[tuple[str, Listener, bytes]]:
    """A host listener on 127.0.0.1 (TCP, then UDP), the program that sends to it from the sandbox,
    and the bytes that program sends."""
    stream = request.param == "tcp"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM if stream else socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    listener = Listener(sock, stream=stream)
    yield (TCP_SEND if stream else UDP_SEND), listener, f"{request.param}-from-sandbox".encode()
    listener.close()


def _unix_listener(address: str | bytes) -> Listener:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(address)
    if isinstance(address, str):
        os.chmod(address, 0o777)  # connect(2) needs write permission: let uid 65534 in when granted
    return Listener(sock, stream=True)


def _port(listener: Listener) -> str:
    return str(listener.sock.getsockname()[1])


def test_inet_to_a_host_listener_fails_without_network(
    sandbox: Sandbox, inet: tuple[str, Listener, bytes]
) -> None:
    send, listener, _ = inet
    result = sandbox.python_code(send, Grants(), _port(listener))

    assert result.returncode != 0
    assert "PermissionError" in result.stderr
    assert listener.received == []


def test_inet_to_a_host_listener_works_with_network_granted(
    sandbox: Sandbox, inet: tuple[str, Listener, bytes]
) -> None:
    send, listener, payload = inet
    sandbox.python_ok(send, Grants(network=True), _port(listener))

    listener.close()
    assert listener.received == [payload]


@pytest.mark.parametrize("network", [False, True], ids=["no-network", "network"])
def test_pathname_unix_socket_outside_the_roots_is_unreachable(
    sandbox: Sandbox, area: Path, network: bool
) -> None:
    outside = _unix_listener(str(area / "outside" / "host.sock"))
    try:
        result = sandbox.python_code(
            UNIX_CONNECT,
            Grants(read_roots=(str(area / "read"),), network=network),
            str(area / "outside" / "host.sock"),
        )
    finally:
        outside.close()

    assert result.returncode != 0
    assert "FileNotFoundError" in result.stderr
    assert outside.received == []


def test_pathname_unix_socket_inside_a_root_is_reachable(sandbox: Sandbox, area: Path) -> None:
    inside = _unix_listener(str(area / "read" / "granted.sock"))
    try:
        result = sandbox.python_code(
            UNIX_CONNECT, Grants(read_roots=(str(area / "read"),)), str(area / "read" / "granted.sock")
        )
    finally:
        inside.close()

    assert result.returncode == 0, result.stderr
    assert inside.received == [b"unix-from-sandbox"]


@pytest.mark.parametrize("network", [False, True], ids=["no-network", "network"])
def test_abstract_unix_socket_on_the_host_is_unreachable(sandbox: Sandbox, network: bool) -> None:
    name = f"reyn-sandbox-test-{uuid.uuid4().hex}"
    host = _unix_listener(b"\0" + name.encode())
    connect = UNIX_CONNECT.replace("s.connect(sys.argv[1])", "s.connect('\\0' + sys.argv[1])")
    try:
        result = sandbox.python_code(connect, Grants(network=network), name)
    finally:
        host.close()

    assert result.returncode != 0
    assert "ConnectionRefusedError" in result.stderr or "PermissionError" in result.stderr
    assert host.received == []


def test_abstract_unix_socket_inside_the_sandbox_works(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "server = socket.socket(socket.AF_UNIX); server.bind('\\0reyn-inside'); server.listen(1)\n"
        "client = socket.socket(socket.AF_UNIX); client.connect('\\0reyn-inside')\n"
        "conn, _ = server.accept(); client.sendall(b'ok'); print(conn.recv(2).decode())\n"
    )

    result = sandbox.python_ok(code, Grants())

    assert result.stdout.strip() == "ok"


def test_only_unix_sockets_can_be_created_without_network(sandbox: Sandbox) -> None:
    code = (
        "import socket\n"
        "for name in ('AF_UNIX', 'AF_INET', 'AF_INET6', 'AF_NETLINK', 'AF_PACKET', 'AF_VSOCK'):\n"
        "    try:\n"
        "        socket.socket(getattr(socket, name), socket.SOCK_DGRAM).close(); print(name, 'created')\n"
        "    except OSError as exc:\n"
        "        print(name, 'refused', exc.errno)\n"
    )

    result = sandbox.python_ok(code, Grants())

    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["AF_UNIX"] == "created"
    assert all(lines[name].startswith("refused") for name in lines if name != "AF_UNIX")
