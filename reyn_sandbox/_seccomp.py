"""A seccomp filter that decides which socket families exist: only unix sockets, unless network is granted.

The network namespace already leaves internet sockets nothing to reach, but some families are not
namespaced at all (AF_VSOCK reaches the hypervisor, AF_PACKET, AF_BLUETOOTH…); listing the bad ones
would be enumeration, so the filter lists the few *allowed* families and refuses every other with
EACCES. io_uring is refused too (its IORING_OP_SOCKET creates sockets without the socket syscall),
and so are foreign ABIs (x32, 32-bit compat), whose syscall numbers this filter does not check.
"""

from __future__ import annotations

import ctypes
import errno
import struct

from . import _syscalls as sc

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0 = 16  # low 32 bits of args[0] on these little-endian machines

# Linux's family numbers (not the socket module's: importing it builds enums, ~15 ms per launch).
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_NO_NETWORK_FAMILIES = (_AF_UNIX,)
# Netlink is allowed with network: glibc's getaddrinfo asks the route table through it.
_NETWORK_FAMILIES = (_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _program(network: bool) -> list[tuple[int, int, int, int]]:
    families = _NETWORK_FAMILIES if network else _NO_NETWORK_FAMILIES
    socket_calls = (sc.syscall_number("socket"), sc.syscall_number("socketpair"))
    refuse_family = _RET_ERRNO | errno.EACCES
    no_such_call = _RET_ERRNO | errno.ENOSYS
    # Instructions are built from the end so every jump offset is known; offsets count from the
    # instruction after the jump. `tail` is the code after the "is it a socket call" dispatch.
    tail: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, _OFFSET_ARG0)]
    for index, family in enumerate(families):
        remaining = len(families) - index - 1
        tail.append((_JEQ_K, remaining + 1, 0, int(family)))  # → ALLOW
    tail += [(_RET_K, 0, 0, refuse_family), (_RET_K, 0, 0, _RET_ALLOW)]
    allow_offset = len(tail) - 1  # from the instruction after the last dispatch jump
    head = [
        (_LD_W_ABS, 0, 0, _OFFSET_ARCH),
        (_JEQ_K, 1, 0, _AUDIT_ARCH[sc.MACHINE]),
        (_RET_K, 0, 0, no_such_call),
        (_LD_W_ABS, 0, 0, _OFFSET_NR),
    ]
    dispatch: list[tuple[int, int, int, int]] = []
    if sc.MACHINE == "x86_64":
        dispatch.append((_JGE_K, 0, 1, _X32_SYSCALL_BIT))
        dispatch.append((_RET_K, 0, 0, no_such_call))
    dispatch.append((_JEQ_K, 0, 1, sc.NR_IO_URING_SETUP))
    dispatch.append((_RET_K, 0, 0, no_such_call))
    # socket / socketpair → the family check (tail[0]); anything else → ALLOW (tail's last).
    dispatch.append((_JEQ_K, 1, 0, socket_calls[0]))
    dispatch.append((_JEQ_K, 0, allow_offset, socket_calls[1]))
    return head + dispatch + tail


def _prologue() -> list[tuple[int, int, int, int]]:
    """A filter's start: a foreign ABI (another architecture, x32) answers ENOSYS, then the syscall
    number is loaded."""
    no_such_call = _RET_ERRNO | errno.ENOSYS
    program = [
        (_LD_W_ABS, 0, 0, _OFFSET_ARCH),
        (_JEQ_K, 1, 0, _AUDIT_ARCH[sc.MACHINE]),
        (_RET_K, 0, 0, no_such_call),
        (_LD_W_ABS, 0, 0, _OFFSET_NR),
    ]
    if sc.MACHINE == "x86_64":
        program += [(_JGE_K, 0, 1, _X32_SYSCALL_BIT), (_RET_K, 0, 0, no_such_call)]
    return program


def _no_exec_program() -> list[tuple[int, int, int, int]]:
    execve, execveat = sc.syscall_number("execve"), sc.syscall_number("execveat")
    program = _prologue()
    program += [
        (_JEQ_K, 1, 0, execve),
        (_JEQ_K, 0, 1, execveat),
        (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return program


_CLONE_THREAD = 0x00010000


def _no_process_program() -> list[tuple[int, int, int, int]]:
    """fork, vfork and a clone that is not a thread's refused (EPERM); clone3, whose flags sit in
    memory a filter cannot read, answers ENOSYS, so glibc falls back to clone for its threads."""
    no_such_call = _RET_ERRNO | errno.ENOSYS
    refuse = _RET_ERRNO | errno.EPERM
    program = _prologue()
    program += [(_JEQ_K, 0, 1, sc.syscall_number("clone3")), (_RET_K, 0, 0, no_such_call)]
    for name in ("fork", "vfork"):  # x86_64 only: aarch64 has clone alone
        if sc.MACHINE == "x86_64":
            program += [(_JEQ_K, 0, 1, sc.syscall_number(name)), (_RET_K, 0, 0, refuse)]
    program += [
        (_JEQ_K, 0, 3, sc.syscall_number("clone")),
        (_LD_W_ABS, 0, 0, _OFFSET_ARG0),  # clone's flags on both machines
        (_JSET_K, 1, 0, _CLONE_THREAD),
        (_RET_K, 0, 0, refuse),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return program


def _no_unix_socket_program() -> list[tuple[int, int, int, int]]:
    """socket(AF_UNIX, …) refused (EACCES); socketpair stays, so a process can still make the
    connected pair it keeps to itself (asyncio's self-pipe) but never a socket to connect or bind."""
    program = _prologue()
    program += [
        (_JEQ_K, 0, 3, sc.syscall_number("socket")),
        (_LD_W_ABS, 0, 0, _OFFSET_ARG0),
        (_JEQ_K, 0, 1, _AF_UNIX),
        (_RET_K, 0, 0, _RET_ERRNO | errno.EACCES),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return program


def _load(program: list[tuple[int, int, int, int]]) -> None:
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(program), ctypes.addressof(buffer))
    sc.prctl_pointer(sc.PR_SET_SECCOMP, sc.SECCOMP_MODE_FILTER, ctypes.pointer(fprog))


def install_no_exec() -> None:
    """Refuse execve and execveat (EPERM) to this process and all it forks from now on: no program
    starts, whatever path or file descriptor names it. Sets NO_NEW_PRIVS first (required)."""
    sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)
    _load(_no_exec_program())


def install_no_processes() -> None:
    """Refuse fork, vfork and every clone but a thread's (EPERM) to this process from now on: it
    keeps its threads and makes no process. Sets NO_NEW_PRIVS first (required)."""
    sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)
    _load(_no_process_program())


def install_no_unix_sockets() -> None:
    """Refuse socket(AF_UNIX) (EACCES) to this process and all it forks from now on (socketpair
    stays). Sets NO_NEW_PRIVS first (required)."""
    sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)
    _load(_no_unix_socket_program())


def install(network: bool) -> None:
    """Install the socket filter on this process (inherited by all it starts). Needs NO_NEW_PRIVS."""
    _load(_program(network))
