"""A server process the tests (and benchmarks) start on the loopback: a free port, waiting until it
listens (or failing with what it said), and stopping it. One copy, so every caller bounds its wait
and ends the process it started the same way."""

from __future__ import annotations

import http.server
import signal
import socket
import subprocess
import time
from pathlib import Path


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler for a test's HTTP server: no access log on the test's output, and one call
    to answer a request."""

    def reply(
        self,
        status: int,
        body: bytes = b"",
        content_type: str = "text/plain",
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer with ``status``, ``body`` (its type and length stated) and any extra ``headers``."""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if body:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at ``host`` right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_listening(
    proc: subprocess.Popen[bytes],
    port: int,
    *,
    host: str = "127.0.0.1",
    timeout: float = 60,
    log: Path | None = None,
    what: str = "the server",
) -> None:
    """Return once ``host:port`` accepts a connection; raise ``RuntimeError`` (with the tail of
    ``log`` when given) if ``proc`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                said = f":\n{log.read_text()}" if log is not None else ""
                raise RuntimeError(f"{what} did not start{said}") from None
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 30) -> int:
    """Send ``sig`` to ``proc`` if it still runs, wait up to ``timeout`` s, then kill it; its exit
    code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return int(proc.returncode)
