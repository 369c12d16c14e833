"""The host's secret files stay unread by processes confined *before* they appear (issue 24, secrets
review F1, F2, F4): the remote failure log is made at the first failure, and a shell command that
waits, or a pooled mcp stdio server, was confined earlier. The load now makes the secrets before
anything runs confined, and the launcher never skips a marked one. A ``read_only`` path outside the
write roots is a mount too: the secrets inside are covered. Each attack beside its positive control
(a file made at the same moment next to the secret is read). Real sandbox, real processes, a real
MCP SDK server over stdio, the failure logged by a separate process as a host's would be."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, load, load_profile

from .conftest import KEY, private
from .test_host_secrets import _enable, _shell_settings, needs_sandbox, probe_reader

# write a marker in the write root (the host waits for it), wait for the go-file, then read each path
WAIT_READ = (
    "import os, sys, time\n"
    "open(sys.argv[1], 'w').close()\n"
    "for _ in range(400):\n"
    "    if os.path.exists(sys.argv[2]): break\n"
    "    time.sleep(0.025)\n"
    "for p in sys.argv[3:]:\n"
    "    try: print(p, repr(open(p).read()))\n"
    "    except OSError as e: print(p, 'error', type(e).__name__)\n"
)


def _log_a_failure(env: dict[str, str]) -> None:
    """A remote failure logged by another process of the host (its first record: the file appears)."""
    code = (
        "from reyn_core import log_remote_failure; log_remote_failure('mcp', 'failed', 'SECRET-sk-live-123')"
    )
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)


def _default_log(world: Any, monkeypatch: Any) -> Path:
    """The log at its default place, in Reyn's log folder under a state folder the workspace holds."""
    monkeypatch.delenv("REYN_REMOTE_LOG")
    monkeypatch.setenv("XDG_STATE_HOME", str(world.root / "state"))
    (world.root / "state").mkdir(mode=0o755)
    return world.root / "state" / "reyn" / "remote.log"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_load_makes_the_secrets_before_anything_runs_confined(secrets, monkeypatch):
    log = _default_log(secrets, monkeypatch)
    (secrets.root / "keys" / "argument-hash.key").unlink()
    load(load_profile())
    assert _mode(log.parent) == 0o700 and _mode(log) == 0o600 and log.read_text() == ""
    assert _mode(secrets.root / "keys" / "argument-hash.key") == 0o600  # the key, made by the load
    # a custom log: the file and the copies its rotation keeps, 0600, nothing written in them
    custom = secrets.root / "custom" / "remote.log"
    monkeypatch.setenv("REYN_REMOTE_LOG", str(custom))
    load(load_profile())
    for file in (custom, *(Path(f"{custom}.{n}") for n in (1, 2, 3))):
        assert _mode(file) == 0o600 and file.read_text() == "", file


@needs_sandbox
def test_a_shell_command_waiting_when_the_first_failure_is_logged_never_reads_it(secrets, monkeypatch):
    log = _default_log(secrets, monkeypatch)
    (secrets.root / "out").mkdir(mode=0o777)
    os.chmod(secrets.root / "out", 0o777)  # where the command says it runs (as uid 65534 under root)
    _enable(secrets, "shell", _shell_settings(["."]) + 'write_roots = ["out"]\n')
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="phase", agent="t", workspace=secrets.root)
    running, go, neighbour = (
        secrets.root / "out" / "running",
        secrets.root / "go",
        secrets.root / "state" / "new.txt",
    )
    argv = ["python3", "-c", WAIT_READ, "out/running", "go", "state/reyn/remote.log", "state/new.txt"]
    found: dict[str, Any] = {}
    call = threading.Thread(
        target=lambda: found.update(
            e=asyncio.run(dispatch_tool(registry, "shell", {"argv": argv}, ctx, allowed_ops=["shell"]))
        )
    )
    call.start()
    try:
        for _ in range(600):  # the command is confined once it wrote its marker
            if running.exists() or not call.is_alive():
                break
            time.sleep(0.05)
        assert running.exists(), found
        _log_a_failure(dict(os.environ))
        private(neighbour, b"made beside the log folder")
        os.chmod(neighbour, 0o644)
        go.write_text("")
    finally:
        call.join(timeout=120)
    assert "SECRET-sk-live-123" in log.read_text()  # the record is there, on the host
    envelope = found["e"]
    assert envelope["status"] == "ok", envelope
    out = envelope["data"]["stdout"]
    assert "state/new.txt 'made beside the log folder'" in out, out  # positive control
    assert "state/reyn/remote.log error PermissionError" in out and "SECRET" not in json.dumps(envelope)


@needs_sandbox
def test_a_pooled_mcp_server_started_before_the_first_failure_never_reads_it(secrets, monkeypatch):
    _default_log(secrets, monkeypatch)
    probe = probe_reader(secrets)

    def read(path: str) -> str:
        return str(probe(path)["text"])

    assert read("beside.txt") == "beside the secrets' folders"  # the server runs, pooled
    _log_a_failure(dict(os.environ))
    private(secrets.root / "state" / "new.txt", b"made after the server started")
    os.chmod(secrets.root / "state" / "new.txt", 0o644)
    assert read("state/new.txt") == "made after the server started"  # positive control: same server
    assert read("state/reyn/remote.log") == "denied: PermissionError 13"


@needs_sandbox
def test_a_secret_in_a_read_only_path_outside_the_write_roots_is_covered(secrets, tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    private(outside / "keys" / "argument-hash.key", KEY)
    private(outside / "neighbour.txt", b"read-only neighbour")
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(outside / "keys" / "argument-hash.key"))
    _enable(secrets, "shell", _shell_settings(["."]) + f"read_only = [{json.dumps(str(outside))}]\n")
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="phase", agent="t", workspace=secrets.root)
    code = (
        "import sys\nfor p in sys.argv[1:]:\n    try: print(p, repr(open(p, 'rb').read()))\n"
        "    except OSError as e: print(p, 'error', type(e).__name__)"
    )
    key = outside / "keys" / "argument-hash.key"
    argv = ["python3", "-c", code, str(outside / "neighbour.txt"), str(key)]
    envelope = asyncio.run(dispatch_tool(registry, "shell", {"argv": argv}, ctx, allowed_ops=["shell"]))
    assert envelope["status"] == "ok", envelope
    out = envelope["data"]["stdout"]
    assert "b'read-only neighbour'" in out, out  # positive control: the read_only path is mounted
    assert f"{key} error PermissionError" in out and "SECRET" not in out  # its folder is covered


@needs_sandbox
def test_an_mcp_server_whose_root_is_a_secret_is_refused_in_the_roots_words(secrets):
    _enable(
        secrets,
        "mcp",
        "\n[plugins.mcp.settings.servers.probe]\n"
        f"command = {json.dumps(sys.executable)}\n"
        'args = ["probe_server.py"]\n'
        f"cwd = {json.dumps(str(secrets.root))}\n"
        'read_roots = ["keys/argument-hash.key"]\n',
    )
    registry = load(load_profile()).registry
    ctx = ToolContext(surface="router", agent="t", workspace=secrets.root)
    args = {"server": "probe", "tool": "read_file", "arguments": {"path": "keys/argument-hash.key"}}
    envelope = asyncio.run(dispatch_tool(registry, "call_mcp_tool", args, ctx))
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied", envelope
    message = envelope["error"]["message"]
    assert "its roots in [plugins.mcp.settings.servers.probe] are refused" in message, message
    assert "write roots" not in message and "no confined process may read" in message
    assert "SECRET" not in json.dumps(envelope)
