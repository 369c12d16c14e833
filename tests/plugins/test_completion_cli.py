"""Shell completion (argcomplete) through the real ``reyn`` program: commands, plugin ids and tool
names are offered, and no plugin code runs on TAB (a plugin whose import writes a marker)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from site_plugin import install_site_plugin

MARKED = """
import pathlib, os
pathlib.Path(os.environ["MARKER"]).write_text("imported")

from reyn_core import hookimpl, tool

REYN_API = 1

@tool(name="marked_lookup", cluster="marked", purity="read_only")
def lookup(key: str) -> str:
    \"\"\"Look a key up.\"\"\"
    return key

@tool(name="marked_list", cluster="marked", purity="read_only")
def listing() -> list[str]:
    \"\"\"List the keys.\"\"\"
    return []

@hookimpl
def reyn_register_tools(register, settings):
    register(lookup)
    register(listing)
"""


@pytest.fixture
def world(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    install_site_plugin(site, "marked", MARKED)
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["marked"]\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "_ARGCOMPLETE", "COMP_"))}
    env.update(
        PYTHONPATH=str(site),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        REYN_CACHE_DIR=str(tmp_path / "cache"),
        MARKER=str(tmp_path / "marker"),
    )
    return env


def _complete(env: dict[str, str], cwd: Path, line: str) -> list[str]:
    out = cwd / "completions"
    proc = subprocess.run(
        [sys.executable, "-m", "reyn_core"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={
            **env,
            "_ARGCOMPLETE": "1",
            "COMP_LINE": line,
            "COMP_POINT": str(len(line)),
            "_ARGCOMPLETE_STDOUT_FILENAME": str(out),
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # TAB never prints an error
    return sorted(w.strip() for w in out.read_text().split("\v") if w.strip())


def test_tab_completes_commands_plugin_ids_and_locked_tool_names_without_importing(world, tmp_path, reyn_cli):
    marker = Path(world["MARKER"])
    # Positive control: a load imports the plugin, and its import writes the marker.
    locked = reyn_cli("plugins", "lock", cwd=tmp_path, env=world)
    assert locked.returncode == 0, locked.stderr
    assert marker.read_text() == "imported"
    marker.unlink()

    assert {"tools", "plugins", "doctor", "completion"} <= set(_complete(world, tmp_path, "reyn "))
    assert _complete(world, tmp_path, "reyn plugins show mar") == ["marked"]
    assert _complete(world, tmp_path, "reyn plugins enable mar") == ["marked"]
    assert _complete(world, tmp_path, "reyn tools call marked_") == ["marked_list", "marked_lookup"]
    assert _complete(world, tmp_path, "reyn tools list --su") == ["--surface"]
    assert not marker.exists()  # nothing above imported the plugin


def test_without_a_lock_tool_names_are_not_completed_and_nothing_is_imported(world, tmp_path):
    assert _complete(world, tmp_path, "reyn tools call marked_") == []
    assert _complete(world, tmp_path, "reyn plugins show mar") == ["marked"]
    assert not Path(world["MARKER"]).exists()


def test_a_broken_profile_offers_nothing_and_prints_nothing(world, tmp_path):
    (tmp_path / "reyn.toml").write_text("[plugins\n")
    assert _complete(world, tmp_path, "reyn tools call m") == []


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_prints_the_script_a_shell_sources(world, tmp_path, shell, reyn_cli):
    proc = reyn_cli("completion", shell, cwd=tmp_path, env=world)
    assert proc.returncode == 0, proc.stderr
    assert "_ARGCOMPLETE" in proc.stdout and "reyn" in proc.stdout
