"""Stdout is the command's output and an exit code never lies about it (issue 24): a closed pipe or
a closed stdout ends any command — built-in or a plugin's — with 141 (128 + SIGPIPE), silently,
never 0 and never a failure message. Real subprocesses, real pipes, a real shell's ``>&-``; each
beside its control, the same command into an open pipe exiting as before."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REYN = (sys.executable, "-m", "reyn_core")
# the file plugin refuses an unknown setting: `reyn doctor` finds an error and exits 1
FAILING = '[plugins]\nenable = ["file", "mcp"]\n[plugins.file.settings]\nbogus_setting = 1\n'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "reyn.toml").write_text(FAILING)
    return tmp_path


def into_closed_pipe(
    argv: tuple[str, ...], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``reyn ARGV`` whose stdout is a pipe the reader closed before it started."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [*REYN, *argv], stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env, timeout=300
        )
    finally:
        os.close(write_end)


COMMANDS = [
    (("doctor",), 1),  # a failed check
    (("tools", "call", "read_file", "path=nope"), 1),  # a failed call (the plugin is not loaded)
    (("tools", "render", "--surface", "router"), 0),
    (("plugins", "list", "--json"), 0),
    (("completion", "bash"), 0),
    (("mcp", "list"), 0),  # a plugin's command
]


@pytest.mark.parametrize(("argv", "code"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_pipe_closed_early_exits_141_silently(workspace, reyn_environment, argv, code):
    env = reyn_environment(workspace)
    closed = into_closed_pipe(argv, workspace, env)
    assert closed.returncode == 141, closed.stderr
    # control: the same command into an open pipe exits as it always did, its output read whole
    proc = subprocess.run([*REYN, *argv], capture_output=True, text=True, cwd=workspace, env=env, timeout=300)
    assert proc.returncode == code, proc.stderr
    assert proc.stdout
    assert closed.stderr == proc.stderr  # silently: no line of its own (the load's warnings stay)


@pytest.mark.parametrize("argv", [a for a, _ in COMMANDS], ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_stdout_closed_at_start_exits_141_silently(workspace, reyn_environment, argv):
    """The shell's ``>&-``: Python starts with no ``sys.stdout``; the first write ends the command."""
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *REYN, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workspace,
        env=reyn_environment(workspace),
        timeout=300,
    )
    assert proc.returncode == 141, proc.stderr
    for noise in ("internal error", "Traceback", "BrokenPipe", "AttributeError"):
        assert noise not in proc.stderr


def test_a_command_that_swallows_exceptions_still_exits_141(tmp_path, reyn_environment):
    """``OutputClosed`` is no ``Exception``: a plugin command's ``except Exception`` (the memory
    pack's) cannot turn the closed pipe into its own error line and exit 2."""
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["memory"]\n')
    env: Callable[..., dict[str, str]] = reyn_environment
    proc = into_closed_pipe(("memory", "--help"), tmp_path, env(tmp_path))
    assert proc.returncode == 141 and proc.stderr == "", proc.stderr
