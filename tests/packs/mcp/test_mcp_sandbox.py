"""A stdio MCP server runs in the kernel sandbox under its own grants: with the defaults it cannot
read ``~/.ssh`` (a temporary HOME) or reach a 127.0.0.1 listener; granted, it can (the positive
control). Real SDK server, real client, real listener, through the dispatcher."""

from __future__ import annotations

import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool

PROBE = Path(__file__).parent / "servers" / "probe_server.py"
SECRET = "ssh-ed25519-private-issue22"


@pytest.fixture(autouse=True)
def _needs_sandbox() -> None:
    from reyn_tools_mcp.sandbox import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(f"the kernel sandbox is unavailable here: {reason}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    return home


@pytest.fixture
def server_dir(tmp_path: Path) -> Path:
    """The server's cwd, holding its script (the default read root is the cwd)."""
    here = tmp_path / "srv"
    here.mkdir()
    shutil.copy(PROBE, here / "probe_server.py")
    return here


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that accepts (and closes) connections for the test's duration."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield int(sock.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        sock.close()


def _server(server_dir: Path, home: Path, **grants: object) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["probe_server.py"],
        "cwd": str(server_dir),
        "env": {"HOME": str(home), "PATH": "/usr/bin:/bin"},
        **grants,
    }


async def _call(mcp_registry, mcp_settings, server: dict, tool: str, arguments: dict) -> str:
    reg = mcp_registry(mcp_settings({"probe": server}))
    args = {"server": "probe", "tool": tool, "arguments": arguments}
    env = await dispatch_tool(reg, "call_mcp_tool", args, ToolContext(surface="router"))
    assert env["status"] == "ok", env
    return str(env["data"])


async def test_default_grants_cannot_read_ssh_keys(mcp_registry, mcp_settings, server_dir, home) -> None:
    text = await _call(
        mcp_registry, mcp_settings, _server(server_dir, home), "read_file", {"path": "~/.ssh/id_ed25519"}
    )
    assert SECRET not in text and "denied" in text


async def test_granted_read_root_can_read_ssh_keys(mcp_registry, mcp_settings, server_dir, home) -> None:
    server = _server(server_dir, home, read_roots=[".", str(home)])
    text = await _call(mcp_registry, mcp_settings, server, "read_file", {"path": "~/.ssh/id_ed25519"})
    assert SECRET in text


async def test_default_grants_cannot_reach_a_local_listener(
    mcp_registry, mcp_settings, server_dir, home, listener
) -> None:
    text = await _call(
        mcp_registry, mcp_settings, _server(server_dir, home), "tcp_connect", {"port": listener}
    )
    assert "connected" not in text and "denied" in text


async def test_network_grant_reaches_a_local_listener(
    mcp_registry, mcp_settings, server_dir, home, listener
) -> None:
    server = _server(server_dir, home, network=True)
    text = await _call(mcp_registry, mcp_settings, server, "tcp_connect", {"port": listener})
    assert "connected" in text


async def test_a_server_failing_under_its_grants_is_told_which_grants_and_key(
    mcp_registry, mcp_settings, tmp_path, home
) -> None:
    # the script lives outside every read root: the server cannot even start
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(PROBE, elsewhere / "probe_server.py")
    cwd = tmp_path / "empty"
    cwd.mkdir()
    server = {**_server(cwd, home), "args": [str(elsewhere / "probe_server.py")]}
    reg = mcp_registry(mcp_settings({"probe": server}))
    args = {"server": "probe", "tool": "read_file", "arguments": {"path": "x"}}
    env = await dispatch_tool(reg, "call_mcp_tool", args, ToolContext(surface="router"))
    assert env["status"] == "error", env
    message = env["error"]["message"]
    assert "read_roots=['.']" in message and "network=false" in message
    assert "[plugins.mcp.settings.servers.probe]" in message


def test_grant_keys_on_an_http_server_are_refused(mcp_settings) -> None:
    with pytest.raises(Exception, match="sandbox grants of stdio servers"):
        mcp_settings({"web": {"url": "https://example.invalid/mcp", "network": True}})


async def test_a_sandboxed_servers_stderr_reaches_the_operators_log_through_a_pipe(
    mcp_registry, mcp_settings, tmp_path, home, operator_log
) -> None:
    """The launcher hands a confined server only a pipe or the null device as stderr (a file could
    have its metadata changed): the client gives each start a pipe of its own and keeps its tail.
    Before, the client handed a read-write temporary file, which the launcher now refuses (125:
    "descriptor 2 is a file"). A server whose script it cannot open says so on stderr, and those
    words reach the operator's log, never the model's message."""
    server = {**_server(tmp_path, home), "args": [str(tmp_path / "missing_server.py")]}
    reg = mcp_registry(mcp_settings({"probe": server}))
    args = {"server": "probe", "tool": "read_file", "arguments": {"path": "x"}}
    env = await dispatch_tool(reg, "call_mcp_tool", args, ToolContext(surface="router"))
    assert env["status"] == "error", env
    logged = operator_log.text()
    assert "missing_server.py" in logged and "No such file" in logged, logged
    assert "descriptor 2 is" not in logged and "No such file" not in env["error"]["message"]
