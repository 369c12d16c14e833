"""The mcp pack installs alone (with the mcp SDK) into a fresh venv, is discovered, and — enabled by
a profile — renders on the right surfaces; import mode's refresh / call / check runs through the
real ``reyn`` against a real stdio server started with the venv's own Python."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

SERVER = Path(__file__).parent / "servers" / "demo_server.py"
CORE_TOOLS = ["call_mcp_tool", "list_mcp_servers", "list_mcp_tools"]


@pytest.fixture(scope="module")
def pack(install_pack):
    return install_pack("mcp")


def _enable(tmp_path: Path, pack, *, import_tools: bool = False) -> None:
    server = tmp_path / "demo_server.py"
    shutil.copy2(SERVER, server)
    tmp_path.chmod(0o755)  # the server's cwd and read root: under root the sandbox's user must read it
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["mcp"]\n'
        f"[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(str(pack.venv.python))}\n"
        f"args = [{json.dumps(str(server))}]\nimport_tools = {'true' if import_tools else 'false'}\n"
    )


def test_only_core_the_mcp_pack_and_its_sdk_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-sandbox", "reyn-tools-mcp"]
    proc = pack.venv.run(
        "python",
        "-c",
        "import importlib.util as u; print(bool(u.find_spec('mcp')), bool(u.find_spec('litellm')))",
    )
    assert proc.stdout.split() == ["True", "False"], proc.stderr


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(pack, tmp_path):
    entry = pack.plugins(tmp_path)["mcp"]
    assert (entry["status"], entry["enabled"], entry["tools"]) == ("discovered", False, [])
    assert entry["distribution"] == "reyn-tools-mcp"
    assert pack.router(tmp_path) == []


def test_enabled_without_a_server_nothing_renders(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["mcp"]\n')
    entry = pack.plugins(tmp_path)["mcp"]
    assert entry["status"] == "loaded" and sorted(entry["tools"]) == CORE_TOOLS
    assert pack.router(tmp_path) == []  # no server: unavailable, and the model is told nothing


def test_enabled_with_a_server_renders_on_router_and_on_phase_with_allowed_ops(pack, tmp_path):
    _enable(tmp_path, pack)
    assert pack.router(tmp_path) == CORE_TOOLS
    assert pack.phase(tmp_path) == []  # the default allowed_ops ("file", "ask_user") exclude the mcp cluster
    assert pack.phase(tmp_path, "mcp") == CORE_TOOLS
    assert pack.phase(tmp_path, "list_mcp_tools") == ["list_mcp_tools"]


def test_a_real_call_in_the_fresh_venv(pack, tmp_path):
    _enable(tmp_path, pack)
    data = pack.json(
        "tools",
        "call",
        "call_mcp_tool",
        "--args",
        json.dumps({"server": "demo", "tool": "echo", "arguments": {"text": "hello"}}),
        cwd=tmp_path,
    )
    assert data["status"] == "ok" and data["data"]["text"] == "hello"


def test_import_mode_refresh_call_and_check(pack, tmp_path):
    _enable(tmp_path, pack, import_tools=True)
    assert not any(n.startswith("demo__") for n in pack.router(tmp_path))  # no snapshot yet
    refresh = pack.venv.run("reyn", "mcp", "refresh", cwd=tmp_path, timeout=120)
    assert refresh.returncode == 0 and "demo: changed" in refresh.stdout, refresh.stdout + refresh.stderr
    assert (tmp_path / ".reyn" / "mcp-tools.json").exists()  # relative to the workspace
    names = pack.router(tmp_path)
    assert {"demo__echo", "demo__add", *CORE_TOOLS} <= set(names)
    assert "demo__add" in pack.phase(tmp_path, "mcp")
    call = pack.json("tools", "call", "demo__add", "--args", '{"a": 40, "b": 2}', cwd=tmp_path)
    assert call["status"] == "ok" and call["data"]["structured_content"] == {"result": 42}
    check = pack.venv.run("reyn", "mcp", "check", cwd=tmp_path, timeout=120)
    assert check.returncode == 0 and "demo: unchanged" in check.stdout, check.stdout + check.stderr


def test_a_settings_typo_fails_the_plugin_at_load_with_its_key(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["mcp"]\n[plugins.mcp.settings]\ncall_timeout = 5\n'
    )
    entry = pack.plugins(tmp_path)["mcp"]
    assert entry["status"] == "failed" and entry["tools"] == []
    assert "call_timeout" in entry["diagnostics"][0]["message"]
