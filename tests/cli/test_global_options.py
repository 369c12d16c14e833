"""The one scanner of `reyn`'s global options: the command word and the profile options, wherever
they stand."""

from __future__ import annotations

import pytest

from reyn_core.cli.global_options import GlobalOptions, scan_global_options


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
        (
            ["--profile-file", "a.toml", "m", "--profile-file", "b.toml"],
            GlobalOptions("m", ["--profile-file", "b.toml"], profile_file="a.toml"),
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


def test_an_option_given_before_the_command_wins_over_one_after_it() -> None:
    options = scan_global_options(["--profile", "a", "cmd", "--profile", "b"])
    assert options.profile == "a" and options.args == ["--profile", "b"]
