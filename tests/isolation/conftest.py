"""Fixtures of the isolated-plugin tests: a site folder on the path, a 127.0.0.1 listener that records
who connects, and a skip when this kernel cannot confine (the tests need the real sandbox)."""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import reyn_sandbox


@pytest.fixture(autouse=True)
def _needs_the_sandbox() -> None:
    current = reyn_sandbox.status()
    if not current.available:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the kernel sandbox is unavailable in CI: {current.reason}")
        pytest.skip(f"the kernel sandbox is unavailable here: {current.reason}")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_profile_env: None) -> Iterator[Path]:
    """A site folder on ``sys.path`` (readable by the sandbox's unprivileged user); the test plugins
    imported in process are forgotten afterwards, so the next test imports its own copy."""
    folder = tmp_path / "site"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [m for m in sys.modules if m.startswith("reyn_iso_")]:
        del sys.modules[name]


class Listener:
    """A server that records what each connection sends; stops with the test. TCP on 127.0.0.1, or
    the listening socket given (a unix one)."""

    def __init__(self, sock: socket.socket | None = None) -> None:
        self.sock = sock if sock is not None else socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1] if sock is None else 0
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(1024))
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()
