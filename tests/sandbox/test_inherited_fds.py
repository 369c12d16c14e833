"""The command gets descriptors 0, 1, 2 and those its caller names (``launcher_argv(pass_fds=)``).

A descriptor the launcher inherits reaches whatever it was opened on, whatever the view: an
``O_PATH`` descriptor of a hidden folder, passed down by a careless caller, read the secret through
``/proc/self/fd/N/k``. The launcher closes every descriptor it inherited but 0, 1, 2 and those named
by its own ``--pass-fds`` argument, before anything else. Each with the real launcher, as root and
unprivileged; the same descriptor named on purpose reaches the command (the positive control).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import TIMEOUT, Sandbox

SECRET = "API_KEY=operator-secret"
SHOW = "ls /proc/self/fd/ | tr '\\n' ' '; echo; cat /proc/self/fd/{fd}/k; cat sec/k; echo end"


def test_a_descriptor_not_named_does_not_reach_the_command(sandbox: Sandbox, area: Path) -> None:
    ws = area / "write"
    (ws / "sec").mkdir()
    (ws / "sec" / "k").write_text(SECRET)
    (ws / "sec" / "k").chmod(0o644)
    keys = SimpleNamespace(
        read_roots=(), write_roots=(str(ws),), network=False, hide=("sec",), read_only=(), sandbox="required"
    )
    grants = reyn_sandbox.resolve_grants(str(ws), keys, {})
    fd = os.open(ws / "sec", os.O_PATH | os.O_DIRECTORY)
    try:
        argv = sandbox.argv(["/bin/sh", "-c", SHOW.format(fd=fd)], grants)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                                env={"PATH": "/usr/bin:/bin"}, pass_fds=(fd,))  # fmt: skip
        # positive control: named, the very same descriptor reaches the command (and reads through)
        named = sandbox.run(["/bin/sh", "-c", SHOW.format(fd=fd)], grants, cwd=str(ws), pass_fds=(fd,))
    finally:
        os.close(fd)
    assert result.returncode == 0 and result.stdout.endswith("end\n"), result.stderr
    assert SECRET not in result.stdout
    assert result.stdout.split("\n")[0].split() == ["0", "1", "2", "3"]  # 3: ls's own listing
    assert named.returncode == 0 and SECRET in named.stdout, named.stderr
    assert str(fd) in named.stdout.split("\n")[0].split()


def test_a_pipe_named_on_purpose_is_the_commands(sandbox: Sandbox) -> None:
    """What a caller hands on purpose (a pipe the command reports on) works; one passed to the
    launcher but not named is closed, even when the command knows its number."""
    kept_r, kept_w = os.pipe()
    other_r, other_w = os.pipe()
    code = "import os, sys; os.write(int(sys.argv[1]), b'hello')"
    try:
        named = sandbox.run([sandbox.python, "-c", code, str(kept_w)], Grants(), pass_fds=(kept_w,))
        argv = sandbox.argv([sandbox.python, "-c", code, str(other_w)], Grants(), pass_fds=(kept_w,))
        unnamed = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                                 env={"PATH": "/usr/bin:/bin"}, pass_fds=(kept_w, other_w))  # fmt: skip
        os.close(kept_w)
        os.close(other_w)
        kept = os.read(kept_r, 100)
        other = os.read(other_r, 100)
    finally:
        os.close(kept_r)
        os.close(other_r)
    assert named.returncode == 0 and kept == b"hello", named.stderr
    assert unnamed.returncode == 1 and "Bad file descriptor" in unnamed.stderr
    assert other == b""  # every writer gone, nothing written: the command never had it


def test_a_named_descriptor_that_is_not_open_is_refused(sandbox: Sandbox) -> None:
    argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants(), pass_fds=(987,))
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout
    assert result.stderr == "reyn-sandbox: --pass-fds: descriptor 987 is not open in the launcher\n"
    with pytest.raises(GrantsError, match="pass_fds must be descriptor numbers above 2"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(2,))
