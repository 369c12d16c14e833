"""A hostile plugin, isolated: every attack fails and the host keeps serving; in process, the same
attacks succeed (so these tests can fail). Real worker processes, the real kernel sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext

from .hostile_plugin import PLUGIN
from .plugin_kit import declaration, install_package_plugin, isolation_profile

SECRET = "host-secret-4f1c"
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- planted"
ATTACKS = (
    "read_ssh_key",
    "write_outside",
    "connect_listener",
    "spawn_shell",
    "read_host_env",
    "signal_host",
    "ptrace_host",
)


class Signals:
    """Counts the SIGUSR2 signals this (host) process receives while installed."""

    def __init__(self) -> None:
        self.received = 0

    def __call__(self, signum: int, frame: Any) -> None:
        self.received += 1


@pytest.fixture
def signals() -> Iterator[Signals]:
    counter = Signals()
    previous = signal.signal(signal.SIGUSR2, counter)
    yield counter
    signal.signal(signal.SIGUSR2, previous)


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A process of the host's user, outside any sandbox, that a plugin in process can trace (a
    process cannot trace itself, so the host's own pid cannot show the attack working in process)."""
    process = subprocess.Popen(["sleep", "300"])
    yield process
    process.kill()
    process.wait(10)


@pytest.fixture
def hostile(
    site: Path,
    tmp_path: Path,
    listener: Any,
    signals: Signals,
    victim: subprocess.Popen[bytes],
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(outside, 0o777)  # writable by anyone: only the sandbox stands between the plugin and it
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("REYN_TEST_HOST_SECRET", SECRET)
    targets = {
        "ssh_key": str(home / ".ssh" / "id_ed25519"),
        "outside_dir": str(outside),
        "port": listener.port,
        "env_name": "REYN_TEST_HOST_SECRET",
        "host_pid": os.getpid(),
        "victim_pid": victim.pid,
    }
    install_package_plugin(
        site,
        "hostile",
        {"__init__.py": PLUGIN, "targets.json": json.dumps(targets), "reyn_permissions.toml": declaration()},
    )
    return {"outside": outside, "listener": listener, "signals": signals, "victim": victim}


def _load(isolation: str) -> Any:
    return host.load(host.Profile.from_toml_text(isolation_profile("hostile", isolation)))


def _call(result: Any, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, name, args or {}, ToolContext(surface="cli")))


def test_isolated_every_attack_fails_and_the_legit_path_works(hostile: dict[str, Any]) -> None:
    result = _load("process")
    assert [i.status for i in result.report.plugins if i.plugin_id == "hostile"] == ["loaded"], [
        d.render() for d in result.report.diagnostics
    ]
    assert _call(result, "echo", {"text": "hi"}) == {"status": "ok", "data": "hi"}
    reply = _call(result, "attack")
    assert reply["status"] == "ok", reply
    for phase in ("import", "call"):
        outcomes = reply["data"][phase]
        assert sorted(outcomes) == sorted(ATTACKS)
        succeeded = {k: v for k, v in outcomes.items() if not v.startswith("blocked")}
        assert succeeded == {}, f"{phase}: {succeeded}"
    assert list(hostile["outside"].iterdir()) == []
    assert hostile["listener"].received == []
    assert hostile["signals"].received == 0
    for phase in ("import", "call"):  # the kernel's answers: no such process in the worker's PID namespace
        assert "PTRACE_ATTACH" in reply["data"][phase]["ptrace_host"], reply["data"][phase]["ptrace_host"]
        assert "ProcessLookupError" in reply["data"][phase]["signal_host"], reply["data"][phase][
            "signal_host"
        ]
    assert hostile["victim"].poll() is None  # not stopped, not killed
    assert _call(result, "echo", {"text": "still here"})["data"] == "still here"


def test_in_process_the_same_attacks_succeed(hostile: dict[str, Any]) -> None:
    result = _load("in-process")
    reply = _call(result, "attack")
    for phase in ("import", "call"):
        outcomes = reply["data"][phase]
        blocked = {k: v for k, v in outcomes.items() if not v.startswith("ok")}
        assert blocked == {}, f"{phase}: {blocked}"
    assert outcomes["read_ssh_key"] == "ok: " + KEY
    assert outcomes["read_host_env"] == "ok: " + SECRET
    assert sorted(p.name for p in hostile["outside"].iterdir()) == ["pwned-call.txt", "pwned-import.txt"]
    assert sorted(hostile["listener"].received) == [b"pwned-call", b"pwned-import"]
    victim = hostile["victim"].pid
    assert outcomes["ptrace_host"] == f"ok: attached to the victim {victim}"
    assert reply["data"]["import"]["ptrace_host"] == f"ok: attached to the victim {victim}"
    deadline = time.monotonic() + 10  # a Python signal handler runs when the main thread next can
    while hostile["signals"].received < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hostile["signals"].received == 2
    assert hostile["victim"].poll() is None  # detached: it runs on


def test_a_100_mb_result_is_refused_and_the_host_keeps_serving(hostile: dict[str, Any]) -> None:
    isolated = _load("process")
    assert [d.render() for d in isolated.report.diagnostics if d.is_error] == []
    reply = _call(isolated, "big")
    assert reply["status"] == "error" and reply["error"]["kind"] == "execution_error"
    assert "over the plugin's limit" in reply["error"]["message"]
    assert _call(isolated, "echo", {"text": "ok"})["data"] == "ok"
    in_process = _load("in-process")
    assert [d.render() for d in in_process.report.diagnostics if d.is_error] == []
    reply = _call(in_process, "big")
    assert len(reply.get("data", reply)) == 100 * 1024 * 1024
