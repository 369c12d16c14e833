"""What this kernel lets the launcher enforce, probed without starting a process and cached."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
from dataclasses import dataclass

from . import _landlock
from . import _syscalls as sc

PRETEND_ENV = "REYN_SANDBOX_PRETEND_MISSING"
"""Comma-separated features to treat as missing (`landlock`, `userns`): for testing the refusal path.
It can only take capability away; nothing makes the launcher claim more than the kernel has."""

_PRETENDABLE = ("landlock", "userns")


class SandboxUnavailable(Exception):
    """The kernel cannot confine a command here; the message says what is missing."""


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands can be confined here and by what."""

    available: bool
    """True when every mechanism the promise needs is present."""
    landlock_abi: int | None
    """The kernel's Landlock ABI (None: absent or disabled)."""
    enforced: tuple[str, ...]
    """Names of what a confined command is held by (with network not granted)."""
    reason: str | None = None
    """Why not, when `available` is False."""


@functools.lru_cache(maxsize=1)
def _kernel_probe() -> tuple[int | None, str | None]:
    if not sys.platform.startswith("linux"):
        return None, f"the sandbox needs Linux (Landlock and namespaces); this is {sys.platform}"
    if sc.MACHINE not in sc.SUPPORTED_MACHINES:
        return None, f"the sandbox supports {', '.join(sc.SUPPORTED_MACHINES)}, not {sc.MACHINE}"
    abi = _landlock.abi_version()
    if abi is None:
        return None, "the kernel has no Landlock (Linux 5.13+ with landlock in the lsm= boot list)"
    return abi, _mount_api_problem() or _userns_problem()


def _mount_api_problem() -> str | None:
    """Why the mount API on descriptors (open_tree, move_mount, mount_setattr), by which the launcher
    builds the view, is missing, or None. Each is called with arguments it refuses (no descriptor, an
    empty path); only ENOSYS — an old kernel, or a seccomp filter of a container — means it is absent."""
    probes = (
        ("open_tree", sc.NR_OPEN_TREE, (-1, b"", ctypes.c_uint(sc.OPEN_TREE_CLONE))),
        ("move_mount", sc.NR_MOVE_MOUNT, (-1, b"", -1, b"", ctypes.c_uint(0))),
        ("mount_setattr", sc.NR_MOUNT_SETATTR, (-1, b"", ctypes.c_uint(0), None, ctypes.c_size_t(0))),
    )
    for name, number, args in probes:
        try:
            fd = sc.raw_syscall(name, number, *args)
        except OSError as exc:
            if exc.errno == errno.ENOSYS:
                return (
                    f"the kernel refuses {name} (ENOSYS): the launcher builds the view with the mount "
                    "API on file descriptors (Linux 5.12+), which this kernel or a seccomp filter denies"
                )
            continue
        os.close(fd)  # not expected with these arguments; closed all the same
    return None


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
            with open(path, encoding="ascii") as handle:
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
    """The sandbox's status on this machine (the kernel probe is cached per process)."""
    abi, problem = _kernel_probe()
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


def require_available() -> SandboxStatus:
    """`status()`, raising `SandboxUnavailable` when commands cannot be confined."""
    current = status()
    if not current.available:
        raise SandboxUnavailable(f"cannot confine commands here: {current.reason}")
    return current
