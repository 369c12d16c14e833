"""The command gets descriptors 0, 1, 2 and those its caller names (``launcher_argv(pass_fds=)``).

A descriptor the launcher inherits reaches whatever it was opened on, whatever the view: an
``O_PATH`` descriptor of a hidden folder, passed down by a careless caller, read the secret through
``/proc/self/fd/N/k``. The launcher closes every descriptor it inherited but 0, 1, 2 and those named
by its own ``--pass-fds`` argument, before anything else (and refuses a named one it could reopen for
more than it was handed: ``test_passed_fds``). Each with the real launcher, as root and
unprivileged; a pipe named on purpose reaches the command (the positive control).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, GrantsError

from .conftest import SECRET, TIMEOUT, Sandbox

SHOW = "ls /proc/self/fd/ | tr '\\n' ' '; echo; cat /proc/self/fd/{fd}/k; cat sec/k; echo end"


def test_a_descriptor_not_named_does_not_reach_the_command(
    sandbox: Sandbox, hidden: tuple[Path, Grants]
) -> None:
    secret, grants = hidden
    ws = secret.parent.parent
    fd = os.open(secret.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        argv = sandbox.argv(["/bin/sh", "-c", SHOW.format(fd=fd)], grants)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=str(ws),
                                env={"PATH": "/usr/bin:/bin"}, pass_fds=(fd,))  # fmt: skip
        # named, the very same descriptor is refused: an O_PATH one is what the command could
        # reopen for more than it was handed (the rule of every inherited descriptor, test_passed_fds)
        named = sandbox.run(["/bin/sh", "-c", SHOW.format(fd=fd)], grants, cwd=str(ws), pass_fds=(fd,))
    finally:
        os.close(fd)
    assert result.returncode == 0 and result.stdout.endswith("end\n"), result.stderr
    assert SECRET not in result.stdout
    assert result.stdout.split("\n")[0].split() == ["0", "1", "2", "3"]  # 3: ls's own listing
    assert named.returncode == 125 and SECRET not in named.stdout, named.stderr
    assert named.stderr.startswith(f"reyn-sandbox: --pass-fds: descriptor {fd} is an O_PATH descriptor")


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
    with pytest.raises(GrantsError, match="pass_fds takes descriptor numbers from 3 to 2147483647"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(2,))


@pytest.mark.parametrize(
    "value", ["\u00b3", "\u0663", "2" * 40, "99999999999", "2147483648", "+5", " 5", "5,", "", "0x5", "3,2"]
)
def test_a_bad_pass_fds_value_is_refused_with_one_line_and_125(sandbox: Sandbox, value: str) -> None:
    """Digits of another script (``isdigit`` takes them, ``int`` used to raise), a number too large
    for a descriptor (``os.fstat`` used to raise OverflowError), a sign, a space, an empty entry: each
    a traceback and exit 1 before; now the one rule (``_grants.descriptor_numbers``) refuses it,
    naming the option as given (``--pass-fds``, not ``launcher_argv``'s ``pass_fds``)."""
    argv = sandbox.argv(["/bin/echo", "COMMAND-RAN"], Grants())
    at = argv.index("--grants")
    argv[at:at] = ["--pass-fds", value]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                            env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert result.returncode == 125 and "COMMAND-RAN" not in result.stdout, result.stderr
    assert result.stderr.startswith("reyn-sandbox: --pass-fds takes descriptor numbers from 3 to 2147483647")
    assert len(result.stderr.splitlines()) == 1, result.stderr
    # positive control: the same argv with a descriptor that is open runs the command
    read_end, write_end = os.pipe()
    try:
        argv[at + 1] = str(write_end)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd="/",
                              env={"PATH": "/usr/bin:/bin"}, pass_fds=(write_end,))  # fmt: skip
    finally:
        os.close(read_end)
        os.close(write_end)
    assert done.returncode == 0 and done.stdout == "COMMAND-RAN\n", done.stderr


@pytest.mark.parametrize("value", [2**40, 2**31, -1, 0, 2, True, 3.0, "5", None])
def test_launcher_argv_refuses_what_the_launcher_would_refuse(value: object) -> None:
    """One rule for ``launcher_argv`` and the launcher: a number it passes on is one the launcher
    takes (``2**40`` passed the old check, then crashed the launcher)."""
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    with pytest.raises(GrantsError, match="pass_fds takes descriptor numbers from 3 to 2147483647"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(5, value))  # type: ignore[arg-type]
    with pytest.raises(GrantsError, match="pass_fds takes descriptor numbers"):
        reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=5)  # type: ignore[arg-type]
    # positive control: the largest number and a generator (read once) are passed on
    argv = reyn_sandbox.launcher_argv(["/bin/true"], Grants(), pass_fds=(fd for fd in (2**31 - 1, 7, 7)))
    assert argv[argv.index("--pass-fds") + 1] == "7,2147483647"


# The command reports what its 0, 1, 2 are open on, then waits (its launcher looked at meanwhile).
REPORT_THEN_WAIT = """import os, sys
def shown(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "closed"
os.write(int(sys.argv[2]), (" ".join(shown(fd) for fd in (0, 1, 2)) + "\\n").encode())
os.read(int(sys.argv[1]), 1)
"""


def _open_on(link: str) -> str:
    try:
        return os.readlink(link)
    except FileNotFoundError:
        return "closed"


@pytest.mark.parametrize("closed", [(0, 1, 2), (1, 2), (0,), ()], ids=["0-1-2", "1-2", "0", "none"])
def test_standard_descriptors_the_caller_closed_are_dev_null(
    sandbox: Sandbox, closed: tuple[int, ...]
) -> None:
    """A caller that starts the launcher with 0, 1 or 2 closed: the launcher opens /dev/null there
    before anything of its own, so neither its own descriptors (before: the pipe tying the sandbox's
    life to it sat on 1 for the whole run) nor the command's standard streams (before: closed, the
    command's own first files taking those numbers) are ever anything else. Both are looked at while
    the command runs: the launcher's from outside, the command's from inside. Control (``none``):
    descriptors the caller left open reach the command unchanged (the caller's own pipes)."""
    gate_r, gate_w = os.pipe()
    report_r, report_w = os.pipe()
    caller = [os.pipe() for _ in range(3)]  # the caller's 0, 1, 2: pipes, told apart by their inodes
    given = [caller[0][0], caller[1][1], caller[2][1]]
    expected = ["/dev/null" if fd in closed else f"pipe:[{os.fstat(given[fd]).st_ino}]" for fd in (0, 1, 2)]
    command = [sandbox.python, "-c", REPORT_THEN_WAIT, str(gate_r), str(report_w)]
    argv = sandbox.argv(command, Grants(), pass_fds=(gate_r, report_w))
    closing = " ".join(f"{fd}>&-" for fd in closed)  # the shell closes them, then becomes the launcher
    process = subprocess.Popen(
        ["/bin/sh", "-c", f'exec "$@" {closing}', "sh", *argv],
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
        stdin=given[0],
        stdout=given[1],
        stderr=given[2],
        pass_fds=(gate_r, report_w),
    )
    for fd in (gate_r, report_w, *(end for pair in caller for end in pair)):
        os.close(fd)
    try:
        with os.fdopen(report_r, "rb") as reports:
            report = reports.readline().decode()
            launcher = [_open_on(f"/proc/{process.pid}/fd/{fd}") for fd in (0, 1, 2)]
    finally:
        os.close(gate_w)  # the command reads its end, then exits
    assert process.wait(timeout=TIMEOUT) == 0
    assert {"command": report.split(), "launcher": launcher} == {"command": expected, "launcher": expected}
