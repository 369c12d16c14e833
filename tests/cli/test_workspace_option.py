"""``reyn --workspace DIR`` for the built-in commands, run as the real ``reyn`` console script: every
command that loads the profile's plugins works in the one folder ``reyn`` resolved, before or after
the command word; a command that loads none refuses the option and says why; a missing folder is
one clear error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REYN = (str(Path(sys.executable).parent / "reyn"),)
PROFILE = '[plugins]\nenable = ["file"]\n'


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """``cwd/`` with the profile and no notes; ``proj/`` (the workspace) with ``notes.txt``."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "reyn.toml").write_text(PROFILE)
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("the workspace's notes\n")
    return tmp_path


def run(reyn_cli, world: Path, *argv: str):
    return reyn_cli(*argv, cwd=world / "cwd", command=REYN, env={"REYN_REMOTE_LOG": "stderr"}, timeout=180)


def read_notes(reyn_cli, world: Path, *workspace: str):
    return run(
        reyn_cli, world, *workspace[:2], "tools", "call", "read_file", "path=notes.txt", *workspace[2:]
    )


@pytest.mark.parametrize(
    "placement",
    [
        ("--workspace", "{proj}"),  # before the command word
        ("", "", "--workspace={proj}"),  # among the command's own words
        ("--workspace", "../proj"),  # relative: to the working directory
    ],
)
def test_tools_call_works_in_the_workspace_given(reyn_cli, world: Path, placement: tuple[str, ...]) -> None:
    words = tuple(w.format(proj=world / "proj") for w in placement)
    if not words[0]:
        proc = run(reyn_cli, world, "tools", "call", "read_file", "path=notes.txt", words[2])
    else:
        proc = read_notes(reyn_cli, world, *words)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["data"]["content"] == "the workspace's notes\n"


def test_without_the_option_the_tools_work_in_the_current_directory(reyn_cli, world: Path) -> None:
    # the control: the same call from the same folder reads the working directory, which has no notes
    proc = read_notes(reyn_cli, world)
    assert proc.returncode == 1
    assert "'notes.txt' does not exist" in json.loads(proc.stdout)["error"]["message"]


@pytest.mark.parametrize(
    "command",
    [
        ("tools", "list"),
        ("tools", "render", "--surface", "router"),
        ("tools", "search", "read"),
        ("plugins", "list"),
        ("plugins", "show", "file"),
        ("plugins", "lock", "--lock-file", "../out.lock"),
        ("plugins", "audit", "--lock-file", "../none.lock"),
        ("doctor",),
        ("approvals", "list"),
    ],
)
def test_every_command_that_loads_takes_the_workspace(
    reyn_cli, world: Path, command: tuple[str, ...]
) -> None:
    # each answers with the option exactly as it answers without it (search: no search tool here,
    # audit: no lock, approvals: no rules — the same error both ways), never a usage error about it
    plain = run(reyn_cli, world, *command)
    given = run(reyn_cli, world, "--workspace", "../proj", *command)
    assert given.returncode == plain.returncode, given.stderr
    assert "workspace" not in given.stderr
    assert given.stdout.replace(str(world / "proj"), str(world / "cwd")) == plain.stdout


@pytest.mark.parametrize(
    ("command", "prog", "untouched"),
    [
        (("init", "--profile-file", "../new.toml"), "reyn init", "new.toml"),
        (("plugins", "new", "fresh", "--dest", ".."), "reyn plugins new", "fresh"),
        (("plugins", "enable", "shell"), "reyn plugins enable", None),
        (("plugins", "disable", "file"), "reyn plugins disable", None),
        (("completion", "bash"), "reyn completion", None),
    ],
)
def test_a_command_that_loads_nothing_refuses_the_workspace(
    reyn_cli, world: Path, command: tuple[str, ...], prog: str, untouched: str | None
) -> None:
    proc = run(reyn_cli, world, *command, "--workspace", "../proj")
    assert proc.returncode == 2
    assert f"`{prog}` loads no plugins, so a workspace means nothing to it" in proc.stderr
    assert "Traceback" not in proc.stderr and not proc.stdout
    assert (world / "cwd" / "reyn.toml").read_text() == PROFILE  # nothing was done
    if untouched:
        assert not (world / untouched).exists()
    # the control: the same command without the option does its work
    assert run(reyn_cli, world, *command).returncode == 0


@pytest.mark.parametrize(
    "placement", [("--workspace", "../missing", "tools", "list"), ("doctor", "--workspace=nope")]
)
def test_a_missing_workspace_is_one_clear_error(reyn_cli, world: Path, placement: tuple[str, ...]) -> None:
    proc = run(reyn_cli, world, *placement)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("reyn: error: --workspace")
    assert "is not a directory" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not proc.stdout


@pytest.mark.parametrize("after", [(), ("--json",), ("--help",)])
def test_a_workspace_without_a_command_is_one_clear_error(
    reyn_cli, world: Path, after: tuple[str, ...]
) -> None:
    # before: argparse took the folder for the command word ("invalid choice: 'ws'")
    proc = run(reyn_cli, world, "--workspace", "../proj", *after)
    said = json.loads(proc.stderr)["error"]["message"] if after == ("--json",) else proc.stderr
    assert proc.returncode == 2
    assert "--workspace '../proj' is given but no command" in said and "invalid choice" not in said
    assert "reyn --workspace DIR COMMAND" in said
    control = run(reyn_cli, world, "--workspace", "../proj", "tools", "list", *after[:1])  # with a command
    assert control.returncode == 0, control.stderr
