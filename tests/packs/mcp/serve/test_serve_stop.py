"""How ``reyn mcp serve`` stops (issue 24): one path for stdio and streamable HTTP, driven here as a
real subprocess of the real ``reyn``.

- Over stdio, the client closing stdin while a sync tool's thread hangs: after ``--shutdown-grace``
  the call is abandoned — the log names it, the audit log adds ``call.abandoned`` after the call's
  ``cancelled`` line — and the process exits ``EXIT_ABANDONED``. Before, it never exited (and a
  later SIGTERM killed it without its cleanups). The control: a call finishing within the grace is
  answered, nothing is abandoned, and the process exits 0.
- The abandoning exit runs the process's cleanups, its ``atexit`` handlers included: a span ended
  before the stop is exported by a real SDK provider's batch processor to a real OTLP receiver on
  127.0.0.1. Before, ``os._exit`` skipped the provider's flush and the span was lost.
- A cleanup that hangs (an ``atexit`` handler sleeping ten minutes) does not keep the process up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from reyn_tools_mcp.serve_stop import CLEANUP_TIMEOUT_S, EXIT_ABANDONED

from .conftest import BASE_PROFILE, REYN, ServeWorld
from .test_serve_http_abandon import sigterm_during_a_hung_call
from .test_serve_http_cancel_holds import _block
from .test_serve_http_limits import _session, open_session, wait_for

BOUND = 60 + CLEANUP_TIMEOUT_S  # the tools below would block for ten minutes: a bound on the exit


class StdioServe:
    """``reyn mcp serve ARGS`` over pipes: JSON-RPC lines in, answers read by a thread."""

    def __init__(self, world: ServeWorld, *args: str, **env: str) -> None:
        self.log = world.root / "serve-stdio.log"
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen(
                [REYN, "mcp", "serve", *args],
                cwd=world.root,
                env=world.env(**env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(json.loads(line))
        self._lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, request_id: Any) -> dict[str, Any]:
        while True:
            message = self._lines.get(timeout=BOUND)
            if message is None:
                raise AssertionError(f"the server closed stdout:\n{self.log.read_text()}")
            if message.get("id") == request_id:
                return message

    def answers(self, *request_ids: Any) -> dict[Any, dict[str, Any]]:
        """The answers to ``request_ids``, in whatever order they come."""
        found: dict[Any, dict[str, Any]] = {}
        while len(found) < len(request_ids):
            message = self._lines.get(timeout=BOUND)
            if message is None:
                raise AssertionError(f"the server closed stdout:\n{self.log.read_text()}")
            if message.get("id") in request_ids:
                found[message["id"]] = message
        return found

    def initialize(self) -> None:
        client = {"name": "stop-test", "version": "1"}
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert "result" in self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def hung_call(self, markers: Path) -> None:
        """Initialize, then call ``probe_block(h0)`` and wait until its thread runs."""
        self.initialize()
        self.send(_block("h0"))
        await wait_for(lambda: (markers / "h0.started").exists(), "h0 running")

    async def exit_code(self) -> int:
        return await asyncio.to_thread(self.proc.wait, BOUND)


@contextlib.contextmanager
def stdio_serve(world: ServeWorld, *args: str, **env: str) -> Iterator[StdioServe]:
    server = StdioServe(world, *args, **env)
    try:
        yield server
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
        server.proc.wait(BOUND)


def _probe_block_lines(world: ServeWorld) -> list[dict[str, Any]]:
    return [line for line in world.audit_lines() if line.get("tool") == "probe_block"]


async def stop_during_a_hung_call(world: ServeWorld, stop: str, **env: str) -> tuple[int, str]:
    """``reyn mcp serve --shutdown-grace 1`` over stdio, stopped (``stop``: "stdin closed" or
    "SIGTERM") while ``probe_block(h0)`` blocks its thread for ten minutes: the exit status, the log."""
    markers = world.markers
    (markers / "h0.long").touch()
    try:
        with stdio_serve(world, "--shutdown-grace", "1", **env) as server:
            await server.hung_call(markers)
            if stop == "SIGTERM":
                server.proc.send_signal(signal.SIGTERM)
            else:
                server.close_stdin()
            return await server.exit_code(), server.log.read_text()
    finally:
        (markers / "h0.go").touch()


async def test_stdio_abandons_a_hung_call_once_stdin_closes(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    code, log = await stop_during_a_hung_call(serve_world, "stdin closed")
    assert code == EXIT_ABANDONED, log
    assert "running call(s) (the client closed stdin)" in log, log
    assert "abandoned 1 call(s) still running after --shutdown-grace" in log, log
    assert "probe_block (request id 'call-h0')" in log and "stopped" in log
    assert not (markers / "h0.finished").exists()  # the process ended under it
    # its call line says how it ended for its caller; the event, that its thread ran on
    lines = _probe_block_lines(serve_world)
    assert [line.get("event", line.get("status")) for line in lines] == ["cancelled", "call.abandoned"]
    ended, abandoned = lines
    for key in ("surface", "agent", "definition_sha256", "plugin", "digest", "args_sha256"):
        assert abandoned[key] == ended[key], key
    assert "what it did afterwards is not recorded" in abandoned["reason"]


async def test_stdio_answers_a_call_finishing_within_the_grace_and_exits_0(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with stdio_serve(serve_world, "--shutdown-grace", "30") as server:
        server.initialize()
        server.send(_block("f0"))
        await wait_for(lambda: (markers / "f0.started").exists(), "f0 running")
        server.close_stdin()
        await wait_for(lambda: "stopping" in server.log.read_text(), "the stop to begin")
        (markers / "f0.go").touch()
        answer = await asyncio.to_thread(server.answer, "call-f0")
        code = await server.exit_code()
        log = server.log.read_text()
    assert code == 0, log
    assert "result" in answer, (answer, log, serve_world.audit_lines())
    assert answer["result"]["content"][0]["text"] == "finished"
    assert "abandoned" not in log and "stopped" in log, log
    assert [line["status"] for line in _probe_block_lines(serve_world)] == ["ok"]


async def test_a_span_ended_before_an_abandoning_stop_is_exported(serve_world: ServeWorld) -> None:
    from ....observability.otlp_receiver import OtlpReceiver  # the real OTLP/HTTP wire, decoded

    serve_world.write_profile(BASE_PROFILE + "\n[observability]\ntracing = true\n")
    markers = serve_world.markers
    (markers / "h0.long").touch()
    # the batch processor holds the span until it is flushed (its schedule: ten minutes)
    with OtlpReceiver(lifetime_s=BOUND * 2) as receiver:
        otel = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": receiver.endpoint,
            "OTEL_SERVICE_NAME": "reyn-stop-test",
            "OTEL_BSP_SCHEDULE_DELAY": "600000",
        }
        try:
            with serve_world.http("--shutdown-grace", "1", **otel) as server:
                async with httpx.AsyncClient(timeout=BOUND) as http:
                    sid = await open_session(http, server.url)
                    echo = {"jsonrpc": "2.0", "id": "echo", "method": "tools/call"}
                    echo["params"] = {"name": "probe_echo", "arguments": {"text": "before the stop"}}
                    done = await http.post(server.url, json=echo, headers=_session(sid))
                    assert "before the stop" in done.text, done.text
                    code = await sigterm_during_a_hung_call(server, http, sid, markers)
                log = server.log.read_text()
        finally:
            (markers / "h0.go").touch()
        names = [span.name for span in receiver.spans]
    assert "execute_tool probe_echo" in names, (names, log)
    assert code == EXIT_ABANDONED, log


@pytest.mark.parametrize("stop", ["stdin closed", "SIGTERM"])
async def test_a_hanging_cleanup_does_not_keep_the_process_up(serve_world: ServeWorld, stop: str) -> None:
    code, log = await stop_during_a_hung_call(serve_world, stop, SERVE_PROBE_HANG_AT_EXIT="1")
    assert code == EXIT_ABANDONED, log
    assert (serve_world.markers / "atexit.started").exists()  # it ran, and hung
    assert f"running the atexit handlers did not finish within {CLEANUP_TIMEOUT_S:g}s" in log, log


async def test_stdio_stops_on_sigterm_with_stdin_still_open(serve_world: ServeWorld) -> None:
    # before, the SDK's stdin read ran in a thread no cancellation could end: the process stayed up
    with stdio_serve(serve_world) as server:
        server.initialize()
        server.proc.send_signal(signal.SIGTERM)
        code = await server.exit_code()
        log = server.log.read_text()
    assert code == 0, log
    assert "running call(s) (signal received)" in log and "stopped" in log, log
