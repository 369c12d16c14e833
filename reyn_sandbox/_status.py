"""What this kernel lets the launcher enforce, probed without starting a process and cached."""

from __future__ import annotations

import ctypes
import errno
import os
import sys

from . import _landlock
from . import _syscalls as sc
from ._value import Value

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py
if TYPE_CHECKING:
    from collections.abc import Callable

PRETEND_ENV = "REYN_SANDBOX_PRETEND_MISSING"
"""Comma-separated features to treat as missing (`landlock`, `userns`): for testing the refusal path.
It can only take capability away; nothing makes the launcher claim more than the kernel has."""

_PRETENDABLE = ("landlock", "userns")


class SandboxUnavailable(Exception):
    """The kernel cannot confine a command here; the message says what is missing."""


class SandboxStatus(Value):
    """Whether commands can be confined here and by what (immutable, equal by fields)."""

    __slots__ = ("available", "enforced", "landlock_abi", "reason")

    available: bool
    """True when every mechanism the promise needs is present."""
    landlock_abi: int | None
    """The kernel's Landlock ABI (None: absent or disabled)."""
    enforced: tuple[str, ...]
    """Names of what a confined command is held by (with network not granted)."""
    reason: str | None
    """Why not, when `available` is False."""

    def __init__(
        self, available: bool, landlock_abi: int | None, enforced: tuple[str, ...], reason: str | None = None
    ) -> None:
        self._init(available=available, landlock_abi=landlock_abi, enforced=enforced, reason=reason)


def _platform_problem() -> str | None:
    """Why this system cannot have the sandbox at all, read without a system call, or None."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (Landlock and namespaces); this is {sys.platform}"
    if sc.MACHINE not in sc.SUPPORTED_MACHINES:
        return f"the sandbox supports {', '.join(sc.SUPPORTED_MACHINES)}, not {sc.MACHINE}"
    return None


def _once(probe: Callable[[], tuple[int | None, str | None]]) -> Callable[[], tuple[int | None, str | None]]:
    """``probe``, run once and its answer kept (per process). Not ``functools.lru_cache``: the launcher
    asks ``_kernel_probe`` and imports no ``functools`` (docs/performance.md)."""
    found: list[tuple[int | None, str | None]] = []

    def cached() -> tuple[int | None, str | None]:
        if not found:
            found.append(probe())
        return found[0]

    return cached


@_once
def _kernel_probe() -> tuple[int | None, str | None]:
    problem = _platform_problem()
    if problem is not None:
        return None, problem
    abi = _landlock.abi_version()
    if abi is None:
        return None, "the kernel has no Landlock (Linux 5.13+ with landlock in the lsm= boot list)"
    # Under a seccomp filter the mount API's answers may be the filter's — and a filter that KILLs
    # or TRAPs a call would end this process: then only the launcher probes it, in its namespaces.
    return abi, (None if _filtered() else mount_api_problem(may_mount=False)) or _userns_problem()


_UNDEFINED_FLAG = 1 << 31
"""A flag bit no kernel defines for these calls: each refuses it (EINVAL) before doing anything."""


def mount_api_problem(may_mount: bool) -> str | None:
    """Why the mount API on descriptors (open_tree, move_mount, mount_setattr), by which the launcher
    builds the view, cannot be used here, or None — the one probe of it, run by the launcher in its
    own namespaces (``may_mount``) and by ``status()`` (in this process, then, under a seccomp
    filter, through the launcher itself: ``_launcher_probe``).

    Each call is made with a flag bit no kernel defines; the kernel answers it EINVAL before doing
    anything — except move_mount, which first checks that the caller may mount (EPERM where it may
    not: outside the launcher's namespaces, for a caller that is not root). Any other answer — ENOSYS
    from a kernel without the call, or whatever a seccomp filter answers for it (EPERM, EACCES, even
    success) — is a refusal, named."""
    probes = (
        ("open_tree", sc.NR_OPEN_TREE, (-1, b"", ctypes.c_uint(_UNDEFINED_FLAG))),
        ("move_mount", sc.NR_MOVE_MOUNT, (-1, b"", -1, b"", ctypes.c_uint(_UNDEFINED_FLAG))),
        (
            "mount_setattr",
            sc.NR_MOUNT_SETATTR,
            (-1, b"", ctypes.c_uint(_UNDEFINED_FLAG), None, ctypes.c_size_t(0)),
        ),
    )
    for name, number, args in probes:
        try:
            sc.raw_syscall(name, number, *args)
        except OSError as exc:
            if exc.errno == errno.EINVAL or (
                name == "move_mount" and exc.errno == errno.EPERM and not may_mount
            ):
                continue
            answer = errno.errorcode.get(exc.errno or 0, str(exc.errno))
        else:  # a filter's "success" (never closed: the number it returned is no descriptor of ours)
            answer = "success, for a flag no kernel defines"
        return (
            f"the kernel refuses {name} ({answer}): the launcher builds the view with the mount API on "
            "file descriptors (Linux 5.12+), which this kernel or a seccomp filter denies"
        )
    return None


def _filtered() -> bool:
    """Whether a seccomp filter may stand between this process and the kernel (``Seccomp:`` in
    /proc/self/status is not 0; unreadable counts as filtered): then an answer may be the filter's."""
    try:
        with open("/proc/self/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Seccomp:"):
                    return line.split()[1] != b"0"
    except (OSError, IndexError):
        pass
    return True


PROBE_SECONDS = 30
"""How long ``status()`` waits for the launcher's probe."""


@_once
def _launcher_probe() -> tuple[int | None, str | None]:
    """The Landlock ABI the launcher found, or why it cannot confine here: the launcher, started as
    a command's launcher is (``python -I -S``, inheriting this process's seccomp filters), launches a
    no-op through every step of a launch (``_launch._probe_launch``). Its one line of refusal (or
    how it ended) is the reason."""
    import signal
    import subprocess

    from ._contract import CANNOT_CONFINE, LAUNCHER_BOOT

    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", LAUNCHER_BOOT, "--probe"],
            stdin=subprocess.DEVNULL,  # never this process's: a terminal or a file would be refused
            capture_output=True,
            text=True,
            errors="replace",
            timeout=PROBE_SECONDS,
            env={},
            cwd="/",
        )
    except subprocess.TimeoutExpired:
        return None, f"the launcher's probe of this kernel did not answer within {PROBE_SECONDS} s"
    except OSError as exc:
        return None, f"the launcher's probe of this kernel could not start: {exc.strerror}"
    words = done.stdout.split()
    if done.returncode == 0 and len(words) == 2 and words[0] == "landlock_abi" and words[1].isdigit():
        return int(words[1]), None
    if done.returncode < 0:
        ended = f"was killed by {signal.Signals(-done.returncode).name}"
    else:
        ended = f"exited {done.returncode}"
    line = (done.stderr.strip().splitlines() or [""])[-1].removeprefix("reyn-sandbox: ")
    return None, line.removeprefix(CANNOT_CONFINE) or f"the launcher's probe of this kernel {ended}"


def _userns_problem() -> str | None:
    """Why unprivileged user namespaces cannot be created, from the sysctls that forbid them."""
    checks = (
        ("/proc/sys/user/max_user_namespaces", lambda v: v > 0, "user.max_user_namespaces is 0"),
        (
            "/proc/sys/kernel/unprivileged_userns_clone",
            lambda v: v == 1,
            "kernel.unprivileged_userns_clone is 0",
        ),
        (
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            lambda v: v == 0,
            "AppArmor restricts them (kernel.apparmor_restrict_unprivileged_userns=1)",
        ),
    )
    # Root creates its outer namespaces directly, but its inner user namespace (the per-sandbox
    # process count) is created unprivileged, so the same sysctls govern every caller.
    for path, ok, message in checks:
        try:
            with open(path, "rb") as handle:  # bytes: a text file would import a codec (the launcher)
                value = int(handle.read().strip())
        except (OSError, ValueError):
            continue
        if not ok(value):
            return f"user namespaces are unavailable: {message}"
    if not os.path.exists("/proc/self/ns/user"):
        return "the kernel has no user namespaces (CONFIG_USER_NS)"
    return None


def pretended_missing() -> tuple[str, ...]:
    """The features `REYN_SANDBOX_PRETEND_MISSING` takes away (unknown names are ignored)."""
    raw = os.environ.get(PRETEND_ENV, "")
    return tuple(name for name in (part.strip() for part in raw.split(",")) if name in _PRETENDABLE)


def status() -> SandboxStatus:
    """The sandbox's status on this machine, as the launcher would find it (cached per process).

    Without a seccomp filter the kernel is probed in this process (``kernel_status``). Under one,
    whose answers this process cannot tell from the kernel's (and which may kill it for a call), this
    process probes nothing: the launcher is asked (``_launcher_probe``, one short-lived launch of a
    no-op), so ``status()`` says available only where a launch gets through every step."""
    if not _filtered() or _platform_problem() is not None:
        return kernel_status()
    if pretended_missing():  # taken away already: nothing to ask the launcher
        return kernel_status((None, None))
    return kernel_status(_launcher_probe())


def kernel_status(found: tuple[int | None, str | None] | None = None) -> SandboxStatus:
    """The sandbox's status from this process's own probes (cached per process), or from ``found``
    (the launcher's answer, under a filter): the launcher's first check, before its namespaces."""
    abi, problem = _kernel_probe() if found is None else found
    pretend = pretended_missing()
    if "landlock" in pretend:
        abi, problem = None, f"Landlock treated as missing ({PRETEND_ENV}=landlock)"
    elif "userns" in pretend and problem is None:
        problem = f"user namespaces treated as missing ({PRETEND_ENV}=userns)"
    if problem is not None:
        return SandboxStatus(False, abi, (), problem)
    assert abi is not None
    enforced = ["landlock-fs"]
    if abi >= 4:
        enforced.append("landlock-no-tcp")
    if abi >= 6:
        enforced.append("scopes")
    enforced += [
        "mount-namespace",
        "pid-namespace",
        "net-namespace",
        "ipc-namespace",
        "no-network",
        "seccomp-sockets",
        "no-new-privs",
        "caps-dropped",
        "non-root-uid",
        "rlimits",
    ]
    return SandboxStatus(True, abi, tuple(enforced))


def require_available(*, launcher: bool = True) -> SandboxStatus:
    """`status()`, raising `SandboxUnavailable` when commands cannot be confined. With ``launcher``
    False, `kernel_status()`: for what a confined program does to itself (``forbid_exec``: a seccomp
    filter), which needs this kernel, not the launcher's namespaces — inside a sandbox, where the
    launcher cannot start again, it still works."""
    current = status() if launcher else kernel_status()
    if not current.available:
        raise SandboxUnavailable(f"cannot confine commands here: {current.reason}")
    return current
