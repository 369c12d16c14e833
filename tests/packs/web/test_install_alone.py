"""The web pack installs alone (with httpx) into a fresh venv, is discovered, and — enabled by a
profile — renders on the right surfaces and fetches a real page through the real ``reyn`` CLI."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "web"


def _enable(tmp_path, port: int | None = None) -> None:
    searx = (
        f'[plugins.web.settings.search]\nbackend = "searxng"\n[plugins.web.settings.search.searxng]\n'
        f'url = "http://127.0.0.1:{port}"\n'
        if port
        else ""
    )
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["web"]\n'
        '[plugins.web.settings.fetch]\nenabled = true\nallow_hosts = ["127.0.0.1"]\n' + searx
    )


def test_only_core_the_web_pack_and_httpx_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-web"]
    assert pack.importable("httpx", "mcp", "litellm") == [True, False, False]


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(pack, tmp_path):
    entry = pack.assert_discovered_but_silent(tmp_path, "web")
    assert entry["distribution"] == "reyn-tools-web"


def test_enabled_web_fetch_renders_on_the_router_and_on_phase_with_allowed_ops(pack, tmp_path):
    _enable(tmp_path)
    entry = pack.plugins(tmp_path)["web"]
    assert entry["status"] == "loaded" and sorted(entry["tools"]) == ["web_fetch", "web_search"]
    assert pack.router(tmp_path) == ["web_fetch"]  # web_search: no backend configured
    assert pack.phase(tmp_path) == []  # the default allowed_ops ("file", "ask_user") exclude the web cluster
    assert pack.phase(tmp_path, "web") == ["web_fetch"]
    assert pack.phase(tmp_path, "web_fetch") == ["web_fetch"]


def test_enabled_without_fetch_nothing_renders(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["web"]\n')
    assert pack.router(tmp_path) == []
    assert pack.phase(tmp_path, "web") == []


def test_a_real_fetch_in_the_fresh_venv_and_a_refused_address(pack, tmp_path, http_server):
    _enable(tmp_path, http_server.port)
    assert pack.router(tmp_path) == ["web_fetch", "web_search"]
    data = pack.json(
        "tools", "call", "web_fetch", "--args", json.dumps({"url": f"{http_server.base}/page"}), cwd=tmp_path
    )
    assert data["status"] == "ok" and data["data"]["title"] == "Test Page"
    assert "# Hello" in data["data"]["text"]
    proc = pack.venv.run(
        "reyn",
        "tools",
        "call",
        "web_fetch",
        "--args",
        json.dumps({"url": f"http://127.0.0.2:{http_server.port}/page"}),
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert json.loads(proc.stdout)["error"]["kind"] == "denied"


def test_a_settings_typo_fails_the_plugin_at_load_with_its_key(pack, tmp_path):
    pack.assert_settings_typo_fails(tmp_path, "web", "enable = true", table=".fetch")
