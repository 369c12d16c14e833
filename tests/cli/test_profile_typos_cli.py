"""A typo in what the profile enables stops every command that loads (exit 2, naming the near
miss); a table for a plugin that is not enabled is a warning on every command that loads."""

from __future__ import annotations

import json

import pytest

LOADING_COMMANDS = [
    ["tools", "list"],
    ["tools", "render", "--surface", "router"],
    ["tools", "call", "convert_units", "value=1", "from_unit=km", "to_unit=m"],
    ["plugins", "list"],
]


@pytest.mark.parametrize("argv", LOADING_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_an_enabled_id_close_to_an_installed_one_is_an_error_naming_it(tmp_path, argv, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["exampel"]\n')
    proc = reyn_cli(*argv, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "plugins.enable names 'exampel' (did you mean 'example'?)" in proc.stderr


@pytest.mark.parametrize("argv", LOADING_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_the_same_profile_spelled_right_works(tmp_path, argv, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli(*argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr


def test_the_typo_under_json_is_an_object_with_code_rd001(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["exampel"]\n')
    proc = reyn_cli("tools", "list", "--json", cwd=tmp_path)
    assert proc.returncode == 2
    error = json.loads(proc.stderr)["error"]
    assert error["code"] == "RD001" and "'example'" in error["message"]


def test_an_enabled_id_close_to_nothing_is_a_plugin_not_installed_here(tmp_path, reyn_cli):
    # Not a typo: the rest of the profile loads, and the missing plugin is one warning line.
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example", "zzqx_remote"]\n')
    proc = reyn_cli("tools", "list", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "1 load error(s) (RD001); some tools may be missing" in proc.stderr  # a plugin left out
    assert "convert_units" in {t["name"] for t in json.loads(proc.stdout)}


def test_doctor_reports_the_typo_with_every_other_finding(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["exampel"]\n')
    proc = reyn_cli("doctor", cwd=tmp_path)
    assert proc.returncode == 1
    assert "RD001 error [exampel]" in proc.stdout and "did you mean 'example'?" in proc.stdout


@pytest.mark.parametrize("argv", LOADING_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_settings_for_a_plugin_that_is_not_enabled_warn_on_every_command(tmp_path, argv, reyn_cli):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["example"]\n\n[plugins.exampl.settings]\nprecision = 2\n'
    )
    proc = reyn_cli(*argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "reyn: warning: RC004" in proc.stderr and "did you mean [plugins.example]?" in proc.stderr
