"""Landlock: the filesystem allow-list, the TCP deny-all and the IPC scopes, at the best ABI the kernel has.

Landlock is the kernel's unprivileged access control: a process builds a ruleset ("these rights are
handled"), adds rules ("these rights beneath this directory"), and restricts itself; every handled
right not granted by a rule is denied to it and every process it starts, for good.
"""

from __future__ import annotations

import ctypes
import os
import stat

from . import _identity
from . import _syscalls as sc

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py
if TYPE_CHECKING:
    from collections.abc import Iterable

_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_WRITE_DIR_ABI1 = sum(1 << bit for bit in range(4, 13))  # REMOVE_DIR … MAKE_SYM
REFER = 1 << 13  # ABI 2: link/rename across directories
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_EXECUTE = EXECUTE | READ_FILE | READ_DIR

NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1


def abi_version() -> int | None:
    """The kernel's Landlock ABI, or None when Landlock is absent or disabled at boot."""
    try:
        return sc.raw_syscall("landlock_create_ruleset", sc.NR_LANDLOCK_CREATE_RULESET, None, 0, 1)
    except OSError:
        return None


def handled_fs(abi: int) -> int:
    """Every filesystem right this ABI knows: all of them are handled, so none is left implicit."""
    rights = READ_EXECUTE | WRITE_FILE | _WRITE_DIR_ABI1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def restrict_self(
    abi: int,
    read_paths: Iterable[str],
    write_paths: Iterable[str],
    read_write_files: Iterable[str],
    network: bool,
) -> list[str]:
    """Restrict this process (and all it starts) to the given paths; return what is enforced.

    `read_paths` get read and execute, `write_paths` every right (write roots, the private /tmp),
    `read_write_files` read and write but no ioctl (the /dev nodes). Without `network`, TCP bind and
    connect are handled with no rule (ABI 4+). Scopes (ABI 6+) always cut abstract unix sockets and
    signals to processes outside the sandbox. Needs NO_NEW_PRIVS set first.
    """
    fs = handled_fs(abi)
    attr = _RulesetAttr(fs, 0, 0)
    size = 8
    enforced = ["landlock-fs"]
    if abi >= 4 and not network:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
        size = 16
        enforced.append("landlock-no-tcp")
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
        enforced.append("scopes")
    ruleset = sc.raw_syscall(
        "landlock_create_ruleset", sc.NR_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0
    )
    try:
        for path in read_paths:
            _add_rule(ruleset, path, READ_EXECUTE & fs)
        for path in write_paths:
            _add_rule(ruleset, path, fs)
        for path in read_write_files:
            _add_rule(ruleset, path, (READ_FILE | WRITE_FILE) & fs)
        sc.raw_syscall("landlock_restrict_self", sc.NR_LANDLOCK_RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return enforced


def _add_rule(ruleset: int, path: str, rights: int) -> None:
    # Reached without following a link: a granted folder's contents may be changed by host processes
    # while this runs, and a link there must not move a rule onto another folder of the view.
    fd = _identity.open_no_symlinks(path, f"the Landlock rule for {path}")
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            # A rule on a file may carry only the rights that apply to files (EINVAL otherwise).
            rights &= _FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        sc.raw_syscall(
            f"landlock_add_rule {path}",
            sc.NR_LANDLOCK_ADD_RULE,
            ruleset,
            _RULE_PATH_BENEATH,
            ctypes.byref(rule),
            0,
        )
    finally:
        os.close(fd)
