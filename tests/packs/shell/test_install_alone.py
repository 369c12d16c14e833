"""The shell pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on the phase surface only; a mistaken allowlist rule fails at profile load."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "shell"

PROFILE = """
[plugins]
enable = ["shell"]

[[plugins.shell.settings.programs]]
name = "echo"
any_args = true
match = ["echo hello"]
"""


def test_only_core_the_sandbox_and_the_shell_pack_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-sandbox", "reyn-tools-shell"]


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(pack, tmp_path):
    pack.assert_discovered_but_silent(tmp_path, "shell")
    assert pack.phase(tmp_path, "shell") == []


def test_enabled_it_renders_on_the_phase_surface_only(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    entry = pack.plugins(tmp_path)["shell"]
    assert entry["status"] == "loaded" and entry["tools"] == ["shell"]
    assert pack.router(tmp_path) == []
    assert pack.phase(tmp_path) == []  # not in the default allowed_ops ["file", "ask_user"]
    assert pack.phase(tmp_path, "shell") == ["shell"]


def test_enabled_without_programs_it_is_unavailable(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["shell"]\n')
    assert pack.plugins(tmp_path)["shell"]["status"] == "loaded"
    assert pack.phase(tmp_path, "shell") == []


def test_it_runs_on_the_phase_surface_and_is_refused_on_the_router(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    tmp_path.chmod(0o755)  # the workspace is a read root: under root the sandbox's user must read it
    ran = pack.json(
        "tools",
        "call",
        "shell",
        "--surface",
        "phase",
        "--allowed-ops",
        "shell",
        "--args",
        json.dumps({"command": "echo hello; rm -rf /"}),
        cwd=tmp_path,
    )
    assert ran["data"]["stdout"] == "hello; rm -rf /\n" and ran["data"]["exit_code"] == 0
    proc = pack.venv.run(
        "reyn",
        "tools",
        "call",
        "shell",
        "--surface",
        "router",
        "--args",
        json.dumps({"argv": ["echo", "x"]}),
        cwd=tmp_path,
    )
    assert proc.returncode != 0
    assert json.loads(proc.stdout)["error"]["kind"] == "gate_refused"


def test_a_mistaken_rule_fails_at_profile_load(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(
        PROFILE
        + """
[[plugins.shell.settings.programs]]
name = "git"
subcommands = ["status", "log"]
not_match = ["git log"]
"""
    )
    entry = pack.plugins(tmp_path)["shell"]
    assert entry["status"] == "failed" and entry["tools"] == []
    assert "not_match example 'git log' is allowed" in entry["diagnostics"][0]["message"]
    doctor = pack.venv.run("reyn", "doctor", cwd=tmp_path)
    assert doctor.returncode == 1 and "RC001" in doctor.stdout
