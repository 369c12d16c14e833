"""Commands of installed plugins are known from metadata alone (``reyn.commands`` entry points):
``reyn --help`` lists them with the step that enables them, a command of a plugin that is not
enabled is refused with that step, and nothing of that plugin is imported to learn any of it.

Each case runs the real ``reyn`` entry point in a fresh interpreter, from a folder without a profile
and with a home directory of its own (how an MCP client starts a server), and reports which modules
of the mcp pack (and the SDK it needs) the process imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
from reyn_core.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 0
roots = ("reyn_tools_mcp", "reyn_tools_memory", "mcp", "mcp_types")
imported = sorted(m for m in sys.modules if m.split(".")[0] in roots)
print("IMPORTED " + json.dumps(imported), file=sys.stderr)
sys.exit(code)
"""


def home_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a process whose home directory is ``home`` (no user profile, no cache)."""
    drop = ("REYN_", "XDG_", "_ARGCOMPLETE", "COMP_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), REYN_CACHE_DIR=str(home / ".cache"))
    return {**env, **extra}


def run_reyn(cwd: Path, home: Path, *args: str) -> tuple[int, str, str, list[str]]:
    env = home_env(home)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    stderr, _, imported = proc.stderr.rpartition("IMPORTED ")
    return proc.returncode, proc.stdout, stderr, json.loads(imported)


@pytest.fixture
def nowhere(tmp_path: Path) -> tuple[Path, Path]:
    """A working folder with no reyn.toml and a home directory with no user profile."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, home


def test_help_lists_the_mcp_command_of_the_installed_pack_without_importing_it(nowhere):
    code, out, err, imported = run_reyn(*nowhere, "--help")
    assert code == 0, err
    mcp_line = next(line for line in out.splitlines() if line.strip().startswith("mcp "))
    assert "plugin 'mcp' (reyn-tools-mcp" in mcp_line
    assert "not enabled: `reyn plugins enable mcp`" in mcp_line
    assert any(line.strip().startswith("memory ") for line in out.splitlines())
    assert imported == []


def test_a_command_of_a_disabled_pack_says_how_to_enable_it_without_importing_it(nowhere):
    code, out, err, imported = run_reyn(*nowhere, "mcp", "serve", "--help")
    assert code == 2, out + err
    assert "command 'mcp' comes from plugin 'mcp' (reyn-tools-mcp" in err
    assert "not enabled by (no profile file: nothing enabled)" in err
    assert "`reyn plugins enable mcp`" in err and "--profile-file" in err
    assert "Traceback" not in err
    assert imported == []


def test_the_same_command_runs_from_any_folder_given_a_profile_file_that_enables_it(nowhere, tmp_path):
    # positive control: same folder, same home; the profile named on the command line enables mcp
    profile = tmp_path / "elsewhere" / "reyn.toml"
    profile.parent.mkdir()
    profile.write_text('[plugins]\nenable = ["mcp"]\n')
    code, out, err, imported = run_reyn(*nowhere, "mcp", "serve", "--help", "--profile-file", str(profile))
    assert code == 0, err
    assert "usage: reyn mcp serve" in out and "--workspace" in out
    assert "reyn_tools_mcp.plugin" in imported


def test_help_says_enabled_for_a_command_whose_plugin_the_profile_enables(nowhere, tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text('[plugins]\nenable = ["mcp"]\n')
    code, out, err, imported = run_reyn(*nowhere, "--profile-file", str(profile), "--help")
    assert code == 0, err
    mcp_line = next(line for line in out.splitlines() if line.strip().startswith("mcp "))
    assert "plugin 'mcp' (reyn-tools-mcp" in mcp_line and "), enabled" in mcp_line
    assert imported == []  # listing still reads metadata only


def test_an_unknown_command_is_refused_before_any_plugin_is_imported(nowhere, tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text('[plugins]\nenable = ["mcp", "memory"]\n')
    code, _, err, imported = run_reyn(*nowhere, "--profile-file", str(profile), "mcpp")
    assert code == 2 and "unknown command 'mcpp'" in err and "from installed plugins: " in err
    assert imported == []


def complete_reyn(cwd: Path, home: Path, line: str) -> tuple[list[str], list[str]]:
    """What TAB offers after ``line`` (the real ``reyn`` entry point, argcomplete's protocol), and
    which modules of the mcp pack and its SDK the process imported (``-X importtime``)."""
    out = home / "completions"
    env = home_env(
        home,
        _ARGCOMPLETE="1",
        COMP_LINE=line,
        COMP_POINT=str(len(line)),
        _ARGCOMPLETE_STDOUT_FILENAME=str(out),
    )
    command = [sys.executable, "-X", "importtime", "-m", "reyn_core"]
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    roots = ("reyn_tools_mcp", "reyn_tools_memory", "mcp", "mcp_types")
    imported = [
        name
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
        and (name := line.rsplit("|", 1)[-1].strip()).split(".")[0] in roots
    ]
    return sorted(w.strip() for w in out.read_text().split("\v") if w.strip()), imported


def test_tab_offers_the_commands_of_installed_plugins_without_importing_them(nowhere):
    offered, imported = complete_reyn(*nowhere, "reyn m")
    assert offered == ["mcp", "memory"]  # declared by the installed packs, neither enabled
    assert imported == []
    everything, imported = complete_reyn(*nowhere, "reyn ")
    assert {"plugins", "tools", "doctor", "completion", "mcp", "memory"} <= set(everything)
    assert imported == []
