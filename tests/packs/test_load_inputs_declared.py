"""What each pack declares its load reads (``reyn_load_inputs``), the render cache's contract with it:
everything a pack's tools, checks, enrichers, settings and diagnostics read beyond its own files and
settings is named, and a pack whose state lives on a server declares nothing (never cached)."""

from __future__ import annotations

import pytest

from reyn_core.host import Profile, load
from reyn_core.loading.report import LoadInputs

pytestmark = pytest.mark.usefixtures("isolated_profile_env")


def declared(pack: str, settings: str = "") -> LoadInputs | None:
    text = f'[plugins]\nenable = ["{pack}"]\n' + (
        f"[plugins.{pack}.settings]\n{settings}" if settings else ""
    )
    result = load(Profile.from_toml_text(text))
    assert result.report.plugin(pack).status == "loaded", result.report.diagnostics
    return result.load_inputs[pack]


@pytest.mark.parametrize("pack", ["file", "shell", "web", "mcp", "catalog"])
def test_with_default_settings_a_pack_reads_nothing_else(pack):
    assert declared(pack) == LoadInputs()


def test_web_with_the_brave_backend_declares_its_api_key_variable():
    assert declared("web", 'search = { backend = "brave", brave = { api_key_env = "MY_KEY" } }\n') == (
        LoadInputs(env=("MY_KEY",))
    )
    assert declared("web", 'search = { backend = "brave" }\n') == LoadInputs(env=("BRAVE_API_KEY",))


def test_memory_with_sqlite_declares_its_store_file_with_its_log_and_journal(tmp_path):
    db = str(tmp_path / ".reyn" / "memory.db")
    assert declared("memory") == LoadInputs(paths=(db, f"{db}-journal", f"{db}-wal"))
    assert declared("memory", 'path = "/srv/m.db"\n') == LoadInputs(
        paths=("/srv/m.db", "/srv/m.db-journal", "/srv/m.db-wal")
    )


def test_memory_with_postgres_declares_nothing_so_it_is_never_cached():
    assert declared("memory", 'backend = "postgres"\n') is None


def test_catalog_declares_its_skill_and_agent_folders(tmp_path):
    found = declared("catalog", 'skill_dirs = ["skills", "/opt/skills"]\nagent_dirs = ["agents"]\n')
    assert found == LoadInputs(
        paths=tuple(sorted(("/opt/skills", str(tmp_path / "skills"), str(tmp_path / "agents"))))
    )


def test_mcp_declares_referenced_variables_and_in_import_mode_the_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv("SRV_BIN", "/usr/bin")
    monkeypatch.setenv("SRV_TOKEN", "t0ken")
    servers = (
        'servers.a = { command = "${SRV_BIN}/a", env = { T = "${SRV_TOKEN}" } }\n'
        'servers.b = { command = "b", import_tools = true }\n'
    )
    assert declared("mcp", servers) == LoadInputs(
        env=("SRV_BIN", "SRV_TOKEN"), paths=(str(tmp_path / ".reyn" / "mcp-tools.json"),)
    )
