"""The one scanner of `reyn`'s global options: the command word and the profile options, wherever
they stand."""

from __future__ import annotations

import pytest

from reyn_core.cli.global_options import (
    GlobalOptionError,
    GlobalOptions,
    scan_global_options,
    workspace_words,
)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], GlobalOptions()),
        (["tools", "list"], GlobalOptions("tools", ["list"])),
        (["--json", "doctor"], GlobalOptions("doctor", [], json=True)),
        (["--profile", "ci", "memory", "export"], GlobalOptions("memory", ["export"], profile="ci")),
        (["--profile=ci", "--profile-file=a.toml", "x"], GlobalOptions("x", [], "ci", "a.toml")),
        (
            ["memory", "export", "--profile-file", "b.toml"],
            GlobalOptions("memory", ["export", "--profile-file", "b.toml"], profile_file="b.toml"),
        ),
        (["m", "--", "--profile", "x"], GlobalOptions("m", ["--", "--profile", "x"])),
        (["tools", "list", "--json"], GlobalOptions("tools", ["list", "--json"], json=True)),
        (["m", "--", "--json", "--traceback"], GlobalOptions("m", ["--", "--json", "--traceback"])),
        (["--help"], GlobalOptions()),
        (["--version", "tools"], GlobalOptions()),
        (["--profile"], GlobalOptions(profile="")),
    ],
)
def test_scan_reads_the_command_and_the_profile_options(argv: list[str], expected: GlobalOptions) -> None:
    assert scan_global_options(argv) == expected


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--profile", "a", "cmd", "--profile", "b"], "--profile given twice"),
        (["--profile-file", "a.toml", "m", "--profile-file", "b.toml"], "--profile-file given twice"),
        (["m", "--workspace=a", "--workspace", "b"], "--workspace given twice"),
        (["m", "--works", "a"], "--works is an abbreviation of --workspace"),
        (["--profile-f=a", "m"], "--profile-f is an abbreviation of --profile-file"),
    ],
)
def test_a_valued_option_given_twice_or_abbreviated_is_refused(argv: list[str], said: str) -> None:
    # argparse keeps the last and expands prefixes; the scan would read another value: refused
    with pytest.raises(GlobalOptionError, match=said):
        scan_global_options(argv)
    # after ``--`` the words are the command's own
    assert scan_global_options(["m", "--", "--works", "--profile", "x"]).profile is None


def test_the_workspace_is_resolved_once_and_handed_to_the_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "proj").mkdir()
    want = f"--workspace={tmp_path / 'proj'}"
    moved = workspace_words(["--workspace", "~/proj", "mcp", "serve", "--", "x"])
    assert moved == ["mcp", "serve", want, "--", "x"]
    assert workspace_words(["mcp", "serve", "--workspace=~/proj", "-v"]) == ["mcp", "serve", "-v", want]
    assert workspace_words(["mcp", "serve"]) == ["mcp", "serve"]  # none given: the command's default
    with pytest.raises(GlobalOptionError, match="is not a directory"):
        workspace_words(["m", "--workspace", str(tmp_path / "missing")])
