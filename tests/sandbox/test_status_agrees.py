"""``status()`` and the launcher agree on whether the kernel lets the launcher build the view.

The launcher builds it with the mount API on descriptors (open_tree, move_mount, mount_setattr). A
kernel without a call answers ENOSYS; a seccomp filter (a container's profile, systemd's
``SystemCallFilter``) may answer anything instead — EPERM, EACCES. Before, ``status()`` read only
ENOSYS as a refusal and said "available" under an EPERM filter, and every launch then failed with
exit 125. Now both run one probe (``_status.mount_api_problem``): each call with a flag no kernel
defines, which the kernel answers EINVAL. Under a filter ``status()`` probes nothing in its own
process (a KILL or TRAP filter would end it) and asks the launcher's ``--probe``, a launch of a
no-op through every step a launch takes, so a filter on any call a launch makes (mount, pivot_root,
landlock_restrict_self, the mount-API calls answered EINVAL or by their arguments) makes both
refuse, in the same words. Here a real seccomp filter is installed in a child process (prctl,
through ctypes), and ``status()`` and the launcher are run under it, as root and as an unprivileged
user; the same filter on an unrelated call, and no filter, are the positive controls.
"""

from __future__ import annotations

import errno
import platform
import subprocess
import sys

import pytest

import reyn_sandbox
from reyn_sandbox import Grants

from .conftest import PACKAGE_PARENT, TIMEOUT, _nobody_python

# Install a seccomp filter answering the system calls numbered in argv[1] (comma-separated) with
# argv[2] — an errno number, "kill" (SIGSYS, the process dies), "trap" (SIGSYS, delivered), or
# "argdeny" (EPERM unless the third argument's bit 31 is set: the real calls are refused, the
# probe's calls with that undefined flag pass) — then exec the rest of argv (the filter is inherited
# by everything it runs).
FILTERED = """
import ctypes, os, platform, struct, sys
arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[platform.machine()]
numbers = [int(n) for n in sys.argv[1].split(",")]
action = sys.argv[2]
ALLOW, EPERM = 0x7FFF0000, 0x00050001
answer = {"kill": 0x80000000, "trap": 0x00030000, "argdeny": EPERM}.get(action) or 0x00050000 | int(action)
def op(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
program = [op(0x20, 0, 0, 4), op(0x15, 1, 0, arch), op(0x06, 0, 0, ALLOW), op(0x20, 0, 0, 0)]
for number in numbers:
    if action == "argdeny":  # load args[2]'s low word; bit 31 set: allow; else EPERM
        program += [op(0x15, 0, 4, number), op(0x20, 0, 0, 32), op(0x45, 1, 0, 0x80000000),
                    op(0x06, 0, 0, EPERM), op(0x06, 0, 0, ALLOW), op(0x20, 0, 0, 0)]
    else:
        program += [op(0x15, 0, 1, number), op(0x06, 0, 0, answer)]
program.append(op(0x06, 0, 0, ALLOW))
buffer = ctypes.create_string_buffer(b"".join(program))
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(program), ctypes.addressof(buffer))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
os.execv(sys.argv[3], sys.argv[3:])
"""
STATUS = (
    f"import sys; sys.path.insert(0, {PACKAGE_PARENT!r}); import reyn_sandbox; "
    "s = reyn_sandbox.status(); print(s.available, s.reason)"
)
CALLS = {"open_tree": 428, "move_mount": 429, "mount_setattr": 442}  # the same on every architecture
# Other calls a launch makes, each under a filter the mount-API probe does not see.
MACHINE_CALLS = {
    "x86_64": {"mount": 165, "pivot_root": 155, "umount2": 166, "unshare": 272},
    "aarch64": {"mount": 40, "pivot_root": 41, "umount2": 39, "unshare": 97},
}[platform.machine()]
LAUNCH_CALLS = {**MACHINE_CALLS, **CALLS, "landlock_create_ruleset": 444, "landlock_restrict_self": 446}
UNRELATED = 1000  # no system call has it: the filter is there, and touches nothing the launcher uses


@pytest.fixture(params=["root", "nobody"])
def runner(request: pytest.FixtureRequest) -> list[str]:
    """The prefix that starts a process as root (this test's uid) or as uid 65534."""
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    if request.param == "root":
        return [sys.executable]
    python = _nobody_python()
    if python is None:
        pytest.skip("no interpreter (or checkout) that uid 65534 can use via setpriv")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python]


def _under_filter(
    runner: list[str], numbers: str, answer: int | str, argv: list[str]
) -> subprocess.CompletedProcess[str]:
    python = runner[-1]
    return subprocess.run(
        [*runner, "-c", FILTERED, numbers, str(answer), python, *argv],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd="/",
        env={"PATH": "/usr/bin:/bin"},
    )


@pytest.mark.parametrize("answer", [errno.EPERM, errno.ENOSYS, errno.EACCES], ids=errno.errorcode.get)
@pytest.mark.parametrize("name", list(CALLS))
def test_a_filter_refusing_the_mount_api_makes_status_and_the_launcher_agree(
    runner: list[str], name: str, answer: int
) -> None:
    result = _under_filter(runner, str(CALLS[name]), answer, ["-I", "-c", STATUS])
    words = f"the kernel refuses {name} ({errno.errorcode[answer]})"
    assert result.stdout.startswith(f"False {words}"), (result.stdout, result.stderr)
    reason = result.stdout.split(" ", 1)[1].strip()

    # the launcher, under the same filter, refuses with the same words: exit 125, nothing run
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())
    refused = _under_filter(runner, str(CALLS[name]), answer, launcher[1:])
    assert refused.returncode == 125 and "COMMAND-RAN" not in refused.stdout
    assert refused.stderr == f"reyn-sandbox: cannot confine commands here: {reason}\n"


def test_a_filter_on_another_call_leaves_the_sandbox_available(runner: list[str]) -> None:
    """Positive control: under a filter (so ``status()`` asks the launcher too) that leaves the mount
    API alone, the sandbox is available and the launcher runs the command; without any filter too."""
    result = _under_filter(runner, str(UNRELATED), errno.EPERM, ["-I", "-c", STATUS])
    assert result.stdout.startswith("True None"), (result.stdout, result.stderr)
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())
    ran = _under_filter(runner, str(UNRELATED), errno.EPERM, launcher[1:])
    assert ran.returncode == 0 and ran.stdout == "COMMAND-RAN\n", ran.stderr

    plain = subprocess.run(
        [*runner, "-I", "-c", STATUS], capture_output=True, text=True, timeout=TIMEOUT, cwd="/"
    )
    assert plain.stdout.startswith("True None"), plain.stderr


@pytest.mark.parametrize("action", ["kill", "trap"])
@pytest.mark.parametrize("name", [*CALLS, "landlock_create_ruleset"])
def test_a_filter_killing_a_mount_api_call_does_not_kill_the_caller_of_status(
    runner: list[str], name: str, action: str
) -> None:
    """Under a filter, ``status()`` makes no probing call in its own process (a KILL or TRAP filter
    would end it with SIGSYS): the launcher's probe, in a process of its own, meets the filter."""
    result = _under_filter(runner, str(LAUNCH_CALLS[name]), action, ["-I", "-c", STATUS])
    assert result.returncode == 0, (result.returncode, result.stderr)
    assert result.stdout == "False the launcher's probe of this kernel was killed by SIGSYS\n", result.stderr
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())
    refused = _under_filter(runner, str(LAUNCH_CALLS[name]), action, launcher[1:])
    assert refused.returncode != 0 and "COMMAND-RAN" not in refused.stdout


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("open_tree", errno.EINVAL),  # the kernel's own answer to the probe: only a real call tells
        ("move_mount", errno.EINVAL),
        ("open_tree", "argdeny"),  # refuses the real call's flags, lets the probe's through
        ("move_mount", "argdeny"),
        ("mount", errno.EPERM),
        ("pivot_root", errno.EPERM),
        ("umount2", errno.EPERM),
        ("unshare", errno.EPERM),
        ("landlock_restrict_self", errno.EPERM),
    ],
    ids=lambda value: value if isinstance(value, str) else errno.errorcode.get(value, str(value)),
)
def test_a_filter_on_any_call_a_launch_makes_makes_status_and_the_launcher_agree(
    runner: list[str], name: str, answer: int | str
) -> None:
    """``--probe`` launches a no-op through every step of a launch, so a filter that refuses any call
    a launch makes (not only the mount API's flag check) makes ``status()`` unavailable, and a launch
    under it runs nothing."""
    result = _under_filter(runner, str(LAUNCH_CALLS[name]), answer, ["-I", "-c", STATUS])
    assert result.returncode == 0 and result.stdout.startswith("False "), (result.stdout, result.stderr)
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())
    refused = _under_filter(runner, str(LAUNCH_CALLS[name]), answer, launcher[1:])
    assert refused.returncode == 125 and "COMMAND-RAN" not in refused.stdout, refused.stderr
    reason = result.stdout.split(" ", 1)[1].strip()
    assert refused.stderr == f"reyn-sandbox: {reason}\n"  # the same step refused, in the same words


# Lower this process's hard limits (memory, open files, CPU, file size) below the probe's former
# fixed grants (512 MiB, 64 files, 11 s, 1 MiB), then run the rest: STATUS, or exec a launcher argv.
LOW_LIMITS = """
import os, resource, sys
for which, value in ((resource.RLIMIT_AS, 400 << 20), (resource.RLIMIT_NOFILE, 50),
                     (resource.RLIMIT_CPU, 5), (resource.RLIMIT_FSIZE, 512 << 10)):
    resource.setrlimit(which, (value, value))
if sys.argv[1:]:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def test_status_under_a_filter_asks_no_limit_above_the_callers(runner: list[str]) -> None:
    """``status()`` under a filter launches the probe's no-op, whose limits are none above the
    caller's hard limits: a caller whose hard limits are lower than the probe's defaults, and which
    launches with grants within them, is told available (it was told "unavailable: memory_bytes
    (536870912) is above the hard limit...", a grant it never set), and its launch runs."""
    result = _under_filter(runner, str(UNRELATED), errno.EPERM, ["-I", "-c", LOW_LIMITS + STATUS])
    assert result.stdout.startswith("True None"), (result.stdout, result.stderr)
    small = Grants(memory_bytes=300 << 20, open_files=40, cpu_seconds=3, file_size_bytes=256 << 10)
    launcher = reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], small)
    ran = _under_filter(runner, str(UNRELATED), errno.EPERM, ["-I", "-c", LOW_LIMITS, *launcher[1:]])
    assert ran.returncode == 0 and ran.stdout == "COMMAND-RAN\n", ran.stderr
    # A launch asking above those hard limits is still refused, naming the grant it asked.
    refused = _under_filter(
        runner, str(UNRELATED), errno.EPERM,
        ["-I", "-c", LOW_LIMITS, *reyn_sandbox.launcher_argv(["/bin/echo", "COMMAND-RAN"], Grants())[1:]],
    )  # fmt: skip
    assert refused.returncode == 125 and "is above the hard limit" in refused.stderr, refused.stderr
