"""Both packs installed alone into a brand-new venv (wheels, offline), driven by the real ``reyn``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


@pytest.fixture(scope="module")
def packs_venv(make_module_venv):
    venv = make_module_venv("webmcp")
    venv.install("reyn-core", "reyn_builtin_tools/web", "reyn_builtin_tools/mcp")
    return venv


def _profile(tmp_path: Path, venv) -> Path:
    server = tmp_path / "demo_server.py"
    shutil.copy2(SERVER, server)
    profile = tmp_path / "reyn.toml"
    profile.write_text(
        '[features]\nplugins = true\n[plugins]\nenable = ["web", "mcp"]\n'
        '[plugins.web.settings.fetch]\nenabled = true\n'
        f'[plugins.mcp.settings]\nsnapshot_file = {json.dumps(str(tmp_path / "snap.json"))}\n'
        f'[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(str(venv.python))}\n'
        f'args = [{json.dumps(str(server))}]\nimport_tools = true\n')
    return profile


def _json(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_both_packs_are_discovered(packs_venv, tmp_path) -> None:
    data = _json(packs_venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))
    entries = {e["id"]: e for e in (data["plugins"] if isinstance(data, dict) else data)}
    assert entries["web"]["distribution"] == "reyn-tools-web"
    assert entries["mcp"]["distribution"] == "reyn-tools-mcp"


def test_render_refresh_and_call_in_a_fresh_venv(packs_venv, tmp_path) -> None:
    profile = _profile(tmp_path, packs_venv)
    data = _json(packs_venv.run("reyn", "tools", "render", "--surface", "router", "--json", "--profile-file",
                                str(profile), cwd=tmp_path))
    names = [t["function"]["name"] for t in (data["tools"] if isinstance(data, dict) else data)]
    assert {"web_fetch", "call_mcp_tool", "list_mcp_tools", "list_mcp_servers"} <= set(names)
    assert "web_search" not in names and not any(n.startswith("demo__") for n in names)

    refresh = packs_venv.run("reyn", "--profile-file", str(profile), "mcp", "refresh", "--profile-file",
                             str(profile), cwd=tmp_path, timeout=120)
    assert refresh.returncode == 0, refresh.stdout + refresh.stderr
    assert "demo: changed" in refresh.stdout

    data = _json(packs_venv.run("reyn", "tools", "render", "--surface", "router", "--json", "--profile-file",
                                str(profile), cwd=tmp_path))
    names = [t["function"]["name"] for t in (data["tools"] if isinstance(data, dict) else data)]
    assert {"demo__echo", "demo__add"} <= set(names)

    call = packs_venv.run("reyn", "tools", "call", "demo__add", "--args", '{"a": 40, "b": 2}', "--json",
                          "--profile-file", str(profile), cwd=tmp_path, timeout=120)
    assert call.returncode == 0, call.stdout + call.stderr
    envelope = json.loads(call.stdout)
    assert envelope["status"] == "ok", envelope
    assert envelope["data"]["structured_content"] == {"result": 42}
    check = packs_venv.run("reyn", "mcp", "check", "--profile-file", str(profile), cwd=tmp_path, timeout=120)
    assert check.returncode == 0 and "demo: unchanged" in check.stdout, check.stdout + check.stderr
