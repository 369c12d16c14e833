"""`reyn`'s own options reach a plugin command wherever the user wrote them.

`reyn` reads `--profile`, `--profile-file`, `--workspace`, `--json` and `--traceback` before or after
a command's name; a plugin command gets its own words, then those options in one form, and builds its
parser with `reyn_core.command_parser`, which declares them on every subcommand. Before, each pack
declared its own subset: `reyn --workspace W memory export D` and `reyn memory export D --json` were
usage errors, `reyn mcp --profile-file F list` took the option for the action, and `reyn --profile ci
mcp install` wrote an entry without the profile.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from reyn_tools_memory.store import MemoryStore

from reyn_core import command_parser
from reyn_core.cli import main

REYN_OPTIONS = ("--profile", "--profile-file", "--workspace", "--json", "--traceback")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A workspace whose memory store (a path relative to the workspace, as the tools resolve it)
    holds one entry, a profile file elsewhere naming it, and a working directory that is neither."""
    workspace = tmp_path / "project"
    MemoryStore(workspace / ".reyn" / "memory.db").put(
        "shared", "", "release-notes", name="Release notes", description="Where", type="reference", body="x"
    )
    profile = tmp_path / "conf" / "team.toml"
    profile.parent.mkdir()
    profile.write_text(
        '[plugins]\nenable = ["memory", "mcp"]\n[plugins.memory.settings]\npath = ".reyn/memory.db"\n'
        '[profiles.ci.plugins]\nenable = ["memory", "mcp"]\n'
    )
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    for key in ("REYN_PROFILE_FILE", "REYN_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    return {"workspace": workspace, "profile": profile, "out": tmp_path / "out"}


def _placements(world: dict[str, Path]) -> list[list[str]]:
    ws, pf, out = str(world["workspace"]), str(world["profile"]), str(world["out"])
    return [
        ["--workspace", ws, "--profile-file", pf, "memory", "export", out, "--json"],
        ["--json", "--workspace", ws, "memory", "--profile-file", pf, "export", out],
        ["memory", "--json", "export", out, f"--workspace={ws}", "--profile-file", pf, "--traceback"],
        ["--traceback", "memory", "export", "--workspace", ws, out, "--profile-file", pf, "--json"],
    ]


@pytest.mark.parametrize("which", range(4))
def test_every_placement_of_reyns_options_reaches_a_command_with_subcommands(world, capsys, which):
    assert main(_placements(world)[which]) == 0, capsys.readouterr().err
    answer = json.loads(capsys.readouterr().out)
    # The workspace's store (not the working directory's, which has none) was exported, as JSON.
    assert answer["exported"] == 1 and any("release-notes" in f for f in answer["files"])


def test_without_workspace_the_command_uses_the_working_directory_and_says_there_is_no_store(world, capsys):
    # Positive control for the placement test: the same command without --workspace reads the working
    # directory's store, which does not exist — so the workspace above is what selected the store.
    assert main(["--profile-file", str(world["profile"]), "memory", "export", str(world["out"])]) == 2
    assert f"no memory store at {Path.cwd() / '.reyn' / 'memory.db'}" in capsys.readouterr().err


def test_a_command_choosing_its_action_by_its_first_word_finds_it_after_reyns_options(world, capsys):
    assert main(["mcp", "--profile-file", str(world["profile"]), "--json", "list"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # the profile configures no server


@pytest.mark.parametrize("how", ["option before", "option after", "environment"])
def test_mcp_install_writes_the_profile_reyn_loaded_however_it_was_chosen(world, capsys, monkeypatch, how):
    words = ["mcp", "install", "claude-code", "--print", "--workspace", str(world["workspace"])]
    chosen = {
        "option before": ["--profile", "ci", *words],
        "option after": [*words, "--profile", "ci"],
        "environment": words,
    }[how]
    if how == "environment":
        monkeypatch.setenv("REYN_PROFILE", "ci")
    assert main(["--profile-file", str(world["profile"]), *chosen]) == 0, capsys.readouterr().err
    (entry,) = json.loads(capsys.readouterr().out)["mcpServers"].values()
    assert entry["args"][-2:] == ["--profile", "ci"]
    assert entry["args"][:3] == ["mcp", "serve", "--profile-file"]


def test_mcp_install_without_a_named_profile_writes_none(world, capsys):
    words = ["--profile-file", str(world["profile"]), "mcp", "install", "claude-code", "--print"]
    assert main([*words, "--workspace", str(world["workspace"])]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["mcpServers"].values()
    assert "--profile" not in entry["args"]


def test_a_plugin_commands_usage_error_is_reported_as_reyns_own(world, capsys):
    assert main(["--json", "--profile-file", str(world["profile"]), "memory", "export"]) == 2
    error = json.loads(capsys.readouterr().err)["error"]
    assert error["code"] == "usage" and "the following arguments are required: dir" in error["message"]
    assert error["usage"].startswith("usage: reyn memory export")


# --------------------------------------------------------------------------- the parser itself


def _tree() -> argparse.ArgumentParser:
    parser = command_parser("reyn demo")
    parser.add_argument("--own")
    group = parser.add_subparsers(dest="action", required=True).add_parser("notes")
    leaf = group.add_subparsers(dest="step", required=True).add_parser("export")
    leaf.add_argument("dir")
    return parser


@pytest.mark.parametrize("option", REYN_OPTIONS)
@pytest.mark.parametrize("level", [0, 1, 2])
def test_command_parser_accepts_reyns_options_at_every_level(option, level):
    words = ["notes", "export", "D"]
    value = [option] if option in ("--json", "--traceback") else [option, "/x"]
    args = _tree().parse_args([*words[:level], *value, *words[level:]])
    assert args.dir == "D"
    name = option.lstrip("-").replace("-", "_")
    assert getattr(args, name) == (True if len(value) == 1 else "/x")


def test_a_value_given_before_a_subcommand_is_not_reset_by_it_and_defaults_are_set():
    args = _tree().parse_args(["--json", "--profile", "ci", "notes", "export", "D"])
    assert args.json is True and args.profile == "ci"
    plain = _tree().parse_args(["notes", "export", "D"])
    assert (plain.json, plain.traceback, plain.profile, plain.profile_file, plain.workspace) == (
        False,
        False,
        None,
        None,
        None,
    )


def test_an_unknown_option_is_still_a_usage_error():
    from reyn_core.cli.reporting import UsageError

    with pytest.raises(UsageError, match="unrecognized arguments: --frobnicate"):
        _tree().parse_args(["notes", "export", "D", "--frobnicate"])


def test_option_help_replaces_help_hides_with_suppress_and_refuses_a_name_that_is_not_reyns():
    parser = command_parser(
        "reyn demo", option_help={"--workspace": "where the notes live", "--json": argparse.SUPPRESS}
    )
    shown = parser.format_help()
    assert "where the notes live" in shown and "--json" not in shown
    assert parser.parse_args(["--json"]).json is True  # hidden, still accepted
    with pytest.raises(ValueError, match="--worksapce"):
        command_parser("reyn demo", option_help={"--worksapce": "typo"})
