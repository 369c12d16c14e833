"""The JSONL audit log does its I/O off the event loop and fails closed on anything but a regular file
(hardening issue 11, class 6).

- 2,000 concurrent calls: every line present and well-formed, the event loop thread never opens or
  creates the log (Python audit events say which thread did), and a ticker task keeps running.
- A line is written before the call's result returns: a process that ``os._exit``-s right after
  the call still has it.
- A FIFO (with and without a reader), a symlink to a character device, a directory, a socket or any
  symbolic link at the path refuses every call (``denied``) with a message naming what is there —
  instead of hanging. Those scenarios run in a subprocess, so a hang fails the test (timeout)
  instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from reyn_core import ToolContext, ToolOrigin, tool
from reyn_core.dispatch import argument_hash
from reyn_core.host import (
    JsonlAuditLog,
    RegistryBuilder,
    ToolCall,
    ToolCallOutcome,
    ToolRegistry,
    dispatch_tool,
)

CTX = ToolContext(surface="router", agent="alice")


@tool(cluster="notes", purity="read_only")
async def echo(n: int) -> int:
    """Return n."""
    return n


def registry_for(log: JsonlAuditLog) -> ToolRegistry:
    builder = RegistryBuilder(hooks=log.hooks())
    builder.register(echo, origin=ToolOrigin(kind="plugin", plugin_id="notes"))
    return builder.freeze()


# Which threads open or create the audit log: Python's audit events ("open", "os.mkdir") are raised
# by the real os.open/os.mkdir calls, whatever code makes them. A hook cannot be removed, so it
# records only while a test has it switched on.
_WATCH: dict[str, Any] = {"prefix": None, "events": []}


def _audit_hook(event: str, args: tuple[Any, ...]) -> None:
    prefix = _WATCH["prefix"]
    if prefix is None or event not in ("open", "os.mkdir") or not args:
        return
    if isinstance(args[0], str | os.PathLike) and os.fspath(args[0]).startswith(prefix):
        _WATCH["events"].append((event, threading.get_ident()))


sys.addaudithook(_audit_hook)


async def test_2000_concurrent_calls_write_every_line_off_the_loop(
    tmp_path: Path, audit_line_fields: frozenset[str]
) -> None:
    log = JsonlAuditLog(tmp_path / "logs" / "audit.jsonl")
    registry = registry_for(log)
    loop_thread = threading.get_ident()
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    _WATCH["prefix"], _WATCH["events"] = str(tmp_path), []
    try:
        tick_task = asyncio.ensure_future(ticker())
        results = await asyncio.gather(*(dispatch_tool(registry, "echo", {"n": i}, CTX) for i in range(2000)))
        stop.set()
        await tick_task
    finally:
        _WATCH["prefix"] = None
    assert results == [{"status": "ok", "data": i} for i in range(2000)]
    events = _WATCH["events"]
    assert events, "the audit hook saw no open of the log at all"
    assert [e for e in events if e[1] == loop_thread] == []  # no file I/O on the event loop thread
    assert ticks > 1  # the ticker ran while the calls were in flight

    raw = log.path.read_bytes()
    assert raw.endswith(b"\n")
    lines = [json.loads(line) for line in raw.decode().splitlines()]
    assert len(lines) == 2000
    assert all(set(line) == audit_line_fields and line["status"] == "ok" for line in lines)
    assert sorted(line["args_sha256"] for line in lines) == sorted(
        argument_hash({"n": i}) for i in range(2000)
    )


async def test_the_line_is_in_the_file_when_the_result_returns(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    registry = registry_for(log)
    for i in range(5):
        assert (await dispatch_tool(registry, "echo", {"n": i}, CTX))["status"] == "ok"
        assert len(log.path.read_text().splitlines()) == i + 1


async def test_a_rotated_log_is_reopened(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    registry = registry_for(log)
    await dispatch_tool(registry, "echo", {"n": 1}, CTX)
    log.path.rename(tmp_path / "audit.jsonl.1")
    await dispatch_tool(registry, "echo", {"n": 2}, CTX)
    assert len((tmp_path / "audit.jsonl.1").read_text().splitlines()) == 1
    assert len(log.path.read_text().splitlines()) == 1


def test_without_an_event_loop_the_hook_writes_before_returning(tmp_path: Path) -> None:
    log = JsonlAuditLog(tmp_path / "audit.jsonl")
    call = ToolCall(echo, {"n": 1}, CTX, "router")
    assert log.refuse_when_unwritable(call) is None
    assert log(call, ToolCallOutcome("ok", 0.01, result=1)) is None
    (line,) = log.path.read_text().splitlines()
    assert json.loads(line)["tool"] == "echo"


# --------------------------------------------------------------------------- real processes

CHILD = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from reyn_core import ToolContext, tool
    from reyn_core.host import JsonlAuditLog, RegistryBuilder, ToolRegistry, dispatch_tool

    @tool(cluster="notes", purity="read_only")
    def echo(n: int) -> int:
        '''Return n.'''
        print("HANDLER RAN", flush=True)
        return n

    log = JsonlAuditLog(sys.argv[1])
    builder = RegistryBuilder(hooks=log.hooks())
    builder.register(echo)
    registry = builder.freeze()
    envelope = asyncio.run(dispatch_tool(registry, "echo", {"n": 7}, ToolContext()))
    print(json.dumps({"envelope": envelope, "reason": log.unwritable_reason()}), flush=True)
    if sys.argv[2:] == ["crash"]:
        os._exit(3)  # no interpreter shutdown, no flushing of anything Python still holds
    """
)


def logged(operator_log: Any, envelope: dict[str, Any]) -> str:
    """Why the call was refused, as the operator's log has it: the model's message is fixed words
    (RC006) citing that record."""
    assert "RC006" in envelope["error"]["message"]
    return str(operator_log.record(envelope["error"]["message"]))


def run_child(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_") or k == "REYN_REMOTE_LOG"}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(path), *extra],
        capture_output=True,
        text=True,
        timeout=30,  # a hang is the bug: far above the ~1 s this takes
        env=env,
        cwd=path.parent if path.parent.is_dir() else None,
    )


def denied(path: Path) -> tuple[dict[str, Any], str | None, str]:
    proc = run_child(path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    return report["envelope"], report["reason"], proc.stdout


def test_a_line_survives_a_crash_right_after_the_call(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    proc = run_child(path, "crash")
    assert proc.returncode == 3, proc.stderr
    (line,) = path.read_text().splitlines()
    assert json.loads(line)["status"] == "ok"


def test_a_fifo_without_a_reader_refuses_calls_instead_of_hanging(tmp_path: Path, operator_log: Any) -> None:
    path = tmp_path / "audit.jsonl"
    os.mkfifo(path)
    envelope, reason, out = denied(path)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied"
    assert "FIFO" in logged(operator_log, envelope) and "not a regular file" in logged(operator_log, envelope)
    assert reason is not None and "FIFO" in reason  # what RC006 reports at load
    assert "HANDLER RAN" not in out


def test_a_fifo_with_a_reader_is_refused_too(tmp_path: Path, operator_log: Any) -> None:
    path = tmp_path / "audit.jsonl"
    os.mkfifo(path)
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        envelope, _, out = denied(path)
        assert envelope["error"]["kind"] == "denied" and "FIFO" in logged(operator_log, envelope)
        assert "HANDLER RAN" not in out
        assert os.read(reader, 4096) == b""  # nothing was written into the pipe
    finally:
        os.close(reader)


def test_a_symlink_to_a_character_device_is_refused(tmp_path: Path, operator_log: Any) -> None:
    path = tmp_path / "audit.jsonl"
    path.symlink_to("/dev/null")
    envelope, reason, out = denied(path)
    assert envelope["error"]["kind"] == "denied" and "symbolic link" in logged(operator_log, envelope)
    assert reason is not None and "symbolic link" in reason
    assert "HANDLER RAN" not in out


def test_a_symlink_to_a_regular_file_is_refused(tmp_path: Path, operator_log: Any) -> None:
    (tmp_path / "real.jsonl").write_text("")
    path = tmp_path / "audit.jsonl"
    path.symlink_to(tmp_path / "real.jsonl")
    envelope, _, out = denied(path)
    assert envelope["error"]["kind"] == "denied" and "symbolic link" in logged(operator_log, envelope)
    assert (tmp_path / "real.jsonl").read_text() == "" and "HANDLER RAN" not in out


def test_a_directory_at_the_path_is_refused(tmp_path: Path, operator_log: Any) -> None:
    path = tmp_path / "audit.jsonl"
    path.mkdir()
    envelope, reason, out = denied(path)
    assert envelope["error"]["kind"] == "denied" and "is a directory" in logged(operator_log, envelope)
    assert reason is not None and "is a directory" in reason
    assert "HANDLER RAN" not in out


def test_a_socket_at_the_path_is_refused(tmp_path: Path, operator_log: Any) -> None:
    path = tmp_path / "a.jsonl"  # short: AF_UNIX paths are limited to ~100 bytes
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.bind(str(path))
        except OSError as exc:
            pytest.skip(f"cannot bind a unix socket here: {exc}")
        envelope, reason, out = denied(path)
        assert envelope["error"]["kind"] == "denied" and "socket" in logged(operator_log, envelope)
        assert reason is not None and "socket" in reason
        assert "HANDLER RAN" not in out
    finally:
        sock.close()


def test_calls_run_again_once_a_regular_file_replaces_the_fifo(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    os.mkfifo(path)
    assert denied(path)[0]["error"]["kind"] == "denied"
    path.unlink()
    envelope, reason, out = denied(path)
    assert envelope == {"status": "ok", "data": 7} and reason is None and "HANDLER RAN" in out
    assert len(path.read_text().splitlines()) == 1
