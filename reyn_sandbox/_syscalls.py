"""The Linux system calls the launcher needs, through ctypes (the standard library has no wrappers
for most of them on Python 3.10/3.11: `os.unshare` is 3.12+, pivot_root, capset and prctl are absent).

Each wrapper raises `OSError` with the call's name on failure, so a setup failure reads
`reyn-sandbox: mount /proc: [Errno 1] Operation not permitted`.
"""

from __future__ import annotations

import ctypes
import os

MACHINE = os.uname().machine

# Per-architecture syscall numbers for calls glibc does not wrap. Landlock's are the same on both.
_SYSCALLS = {
    "x86_64": {
        "pivot_root": 155,
        "capset": 126,
        "socket": 41,
        "socketpair": 53,
        "rt_sigaction": 13,
        "execve": 59,
        "execveat": 322,
        "clone": 56,
        "fork": 57,
        "vfork": 58,
        "clone3": 435,
    },
    "aarch64": {
        "pivot_root": 41,
        "capset": 91,
        "socket": 198,
        "socketpair": 199,
        "rt_sigaction": 134,
        "execve": 221,
        "execveat": 281,
        "clone": 220,
        "clone3": 435,
    },
}
SUPPORTED_MACHINES = tuple(_SYSCALLS)
NR_LANDLOCK_CREATE_RULESET = 444
NR_LANDLOCK_ADD_RULE = 445
NR_LANDLOCK_RESTRICT_SELF = 446
NR_IO_URING_SETUP = 425
# The mount API on file descriptors (Linux 5.2; mount_setattr 5.12, below Landlock's 5.13), the same
# numbers on every architecture.
NR_OPEN_TREE = 428
NR_MOVE_MOUNT = 429
NR_MOUNT_SETATTR = 442
OPEN_TREE_CLONE = 1
AT_EMPTY_PATH = 0x1000
AT_RECURSIVE = 0x8000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOVE_MOUNT_T_EMPTY_PATH = 0x40
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
MOUNT_ATTR_IDMAP = 0x00100000

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
# statvfs f_flag bits that equal their MS_ counterparts and that a remount must keep (the kernel
# locks them on mounts inherited into a user namespace; dropping one fails with EPERM).
_KEPT_MOUNT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096  # NOATIME NODIRATIME RELATIME

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(name: str, result: int) -> int:
    if result == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")
    return result


def syscall_number(name: str) -> int:
    """This machine's number for `name` (KeyError on an unsupported architecture)."""
    return _SYSCALLS[MACHINE][name]


def raw_syscall(name: str, number: int, *args: object) -> int:
    """`syscall(number, *args)`, raising OSError named `name` on -1."""
    return _check(name, _libc.syscall(ctypes.c_long(number), *args))


class _KernelSigaction(ctypes.Structure):
    # The kernel's struct sigaction on x86_64 and aarch64: handler, flags, restorer, mask.
    _fields_ = [
        ("handler", ctypes.c_ulong),
        ("flags", ctypes.c_ulong),
        ("restorer", ctypes.c_ulong),
        ("mask", ctypes.c_ulong),
    ]


def reset_all_signal_dispositions() -> None:
    """Every signal 1-64 back to SIG_DFL, through the raw syscall.

    An ignored signal survives execve. Python's `signal` cannot touch 32 and 33 (glibc reserves
    them), yet a parent may have left them ignored, so every number is reset rather than a list
    of the signals Python knows. SIGKILL and SIGSTOP refuse the call (EINVAL): they are never
    ignored anyway.
    """
    default = _KernelSigaction(0, 0, 0, 0)
    number = syscall_number("rt_sigaction")
    for sig in range(1, 65):
        _libc.syscall(ctypes.c_long(number), sig, ctypes.byref(default), None, ctypes.c_ulong(8))


def unshare(flags: int) -> None:
    """unshare(2)."""
    _check("unshare", _libc.unshare(ctypes.c_int(flags)))


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """mount(2); the OSError names the target."""
    enc = [None if s is None else os.fsencode(s) for s in (source, target, fstype, data)]
    result = _libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3])
    _check(f"mount {target}", result)


def remount_read_only(target: str) -> None:
    """Make the bind mount at `target` read-only, keeping the flags the kernel locked on it."""
    kept = os.statvfs(target).f_flag & _KEPT_MOUNT_FLAGS
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept)


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def clone_tree(fd: int) -> int:
    """open_tree(OPEN_TREE_CLONE | AT_RECURSIVE): a detached copy of the mount tree at `fd` (a bind
    mount not attached anywhere yet), as a descriptor."""
    flags = AT_EMPTY_PATH | OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC
    return raw_syscall("open_tree", NR_OPEN_TREE, fd, b"", ctypes.c_uint(flags))


def set_tree_attributes(tree: int, attributes: int, userns_fd: int = 0) -> None:
    """mount_setattr(AT_RECURSIVE) on a detached tree: set `attributes` (MOUNT_ATTR_*) on every mount
    of it; `userns_fd` with MOUNT_ATTR_IDMAP."""
    attr = _MountAttr(attributes, 0, 0, userns_fd)
    raw_syscall(
        "mount_setattr",
        NR_MOUNT_SETATTR,
        tree,
        b"",
        ctypes.c_uint(AT_EMPTY_PATH | AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )


def attach_tree(tree: int, target_fd: int) -> None:
    """move_mount a detached tree onto the file `target_fd` is open on (no path is looked up)."""
    flags = MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH
    raw_syscall("move_mount", NR_MOVE_MOUNT, tree, b"", target_fd, b"", ctypes.c_uint(flags))


def umount2(target: str, flags: int) -> None:
    """umount2(2)."""
    _check(f"umount {target}", _libc.umount2(os.fsencode(target), ctypes.c_int(flags)))


def pivot_root(new_root: str, put_old: str) -> None:
    """pivot_root(2) (no glibc wrapper)."""
    raw_syscall("pivot_root", syscall_number("pivot_root"), os.fsencode(new_root), os.fsencode(put_old))


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    """prctl(2) with integer arguments."""
    args = (ctypes.c_ulong(a) for a in (arg2, arg3, arg4, arg5))
    return _check(f"prctl({option})", _libc.prctl(ctypes.c_int(option), *args))


def prctl_pointer(option: int, arg2: int, pointer: object) -> None:
    """prctl(2) whose third argument is a pointer (PR_SET_SECCOMP)."""
    _check(f"prctl({option})", _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), pointer, 0, 0))


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_bounding_and_ambient() -> None:
    """Empty the bounding and ambient sets (needs CAP_SETPCAP): no later execve can regain a capability."""
    with open("/proc/sys/kernel/cap_last_cap", "rb") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)


def drop_all_capabilities() -> None:
    """Empty every capability set: bounding and ambient first (while CAP_SETPCAP is held), then the
    effective, permitted and inheritable sets."""
    drop_bounding_and_ambient()
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit data words
    data = (_CapData * 2)()
    raw_syscall("capset", syscall_number("capset"), ctypes.byref(header), data)


def set_no_new_privs() -> None:
    """PR_SET_NO_NEW_PRIVS: no execve (setuid bit, file capabilities) can raise privileges again."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)
