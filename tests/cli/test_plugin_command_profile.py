"""A plugin's command sees the profile chosen on the `reyn` command line, wherever the option stood."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from reyn_tools_memory.store import MemoryStore

from reyn_core.cli import main


@pytest.fixture
def elsewhere_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A profile outside the working directory whose memory store holds one entry."""
    db = tmp_path / "store" / "memory.db"
    MemoryStore(db).put(
        "shared",
        "",
        "release-notes",
        name="Release notes",
        description="Where they live",
        type="reference",
        body="docs/releases.md",
    )
    profile = tmp_path / "conf" / "team.toml"
    profile.parent.mkdir()
    profile.write_text(f'[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\npath = "{db}"\n')
    work = tmp_path / "work"  # no reyn.toml here: only the option can point at the profile
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    for key in ("REYN_PROFILE_FILE", "REYN_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    return profile


def test_global_profile_option_before_a_plugin_command_reaches_the_command(elsewhere_profile, tmp_path):
    out = tmp_path / "export"
    assert main(["--profile-file", str(elsewhere_profile), "memory", "export", str(out)]) == 0
    exported = sorted(p.name for p in out.rglob("*.md"))
    assert exported and any("release-notes" in name for name in exported)
    assert "REYN_PROFILE_FILE" not in os.environ  # the choice is handed over, not put in the environment


def test_profile_option_after_the_plugin_command_reaches_the_command(elsewhere_profile, tmp_path):
    out = tmp_path / "export-after"
    assert main(["memory", "--profile-file", str(elsewhere_profile), "export", str(out)]) == 0
    assert any("release-notes" in p.name for p in out.rglob("*.md"))


def test_relative_profile_file_is_resolved_before_the_command_runs(elsewhere_profile, tmp_path):
    out = tmp_path / "export-rel"
    relative = os.path.relpath(elsewhere_profile)
    assert main([f"--profile-file={relative}", "memory", "export", str(out)]) == 0
    assert any(out.rglob("*.md"))


def test_without_the_option_the_plugin_is_not_enabled_and_the_error_says_so(elsewhere_profile, capsys):
    assert main(["memory", "export", "x"]) == 2
    err = capsys.readouterr().err
    assert "command 'memory' comes from plugin 'memory'" in err and "not enabled" in err
    assert "`reyn plugins enable memory`" in err


# --- `reyn tools` flags that would do nothing are usage errors; partial loads say so ---------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["tools", "render", "--surface", "router", "--allowed-ops", "file"],
            "--allowed-ops applies to the phase",
        ),
        (["tools", "render", "--surface", "phase", "--strict"], "--strict applies to the router"),
        (
            ["tools", "call", "text_stats", "--allowed-ops", "text"],
            "--allowed-ops applies to --surface phase",
        ),
    ],
)
def test_a_flag_that_would_do_nothing_is_a_usage_error(elsewhere_profile, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_tools_list_says_on_stderr_when_the_load_had_errors(elsewhere_profile, capsys, tmp_path):
    (Path.cwd() / "reyn.toml").write_text('[plugins]\nenable = ["memory", "no_such_plugin"]\n')
    assert main(["tools", "list", "--json"]) == 0
    captured = capsys.readouterr()
    assert "1 load error(s) (RD001)" in captured.err and "reyn doctor" in captured.err
    assert any(t["name"] == "remember_shared" for t in __import__("json").loads(captured.out))
