"""The launcher's descriptors: the null device on a closed 0, 1, 2 (``standard_descriptors``), what
the command may inherit — 0, 1, 2 and ``--pass-fds`` alike (``check_handed``) — the caller's stop and
verdict pipes (``own_pipe``), and closing everything else it inherited (``close_inherited``).

Split from ``_launch`` (which reads the options and runs the steps) so each stays readable; nothing
here knows the options' names but through the words it is handed.
"""

from __future__ import annotations

import fcntl
import os
import stat

from . import _supervisor
from ._grants import GrantsError, descriptor_numbers

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py
if TYPE_CHECKING:
    from collections.abc import Iterable  # for the type checker only: the launcher imports no collections


def standard_descriptors() -> None:
    """Open the null device onto whichever of 0, 1, 2 is closed, before the launcher opens anything
    of its own: else the launcher's first descriptors (the pipe that ties the sandbox's life to it, a
    folder it binds) take those numbers — where its own lines go, and what the command would start
    with as its standard streams. What is opened must *be* the null device, checked on the open
    descriptor (``_open_null``), so a file bound over /dev/null is refused, not handed on. What
    stands on 0, 1, 2 then is checked with the rest of what the command inherits (``check_handed``)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            _open_null(fd)


def check_handed(passed: Iterable[int], option: str, network: bool) -> None:
    """The one rule on every descriptor the command inherits — 0, 1, 2 and ``passed`` (those the
    caller named in ``option``, ``--pass-fds``): each must be one of the few kinds that give the
    command nothing beyond the stream it was handed (``_stream_problem``), given whether the grants
    allow the ``network``. It reaches the command as it is, so the rule lists what is accepted and
    refuses everything else: nothing is started (125, the line on 2 when it is open and on the
    verdict pipe)."""
    pipes = pipe_device()
    for fd in (0, 1, 2, *passed):
        problem = _stream_problem(fd, pipes, network)
        if problem:
            where = "" if fd <= 2 else f"{option}: "
            _supervisor.fail_setup(
                f"{where}descriptor {fd} is {problem}: the command would get it as it is (reopened "
                f"through /proc/self/fd/{fd}, its metadata changed), so it may inherit only "
                f"{_accepted(network)}; hand a file or a terminal through a pipe the caller copies"
            )


def _accepted(network: bool) -> str:
    kinds = ["an anonymous pipe of the caller's own", "a connected unix stream socket"]
    if network:
        kinds.append("an internet stream or datagram socket")
    return ", ".join(kinds) + " or the null device"


def _open_null(fd: int) -> None:
    """The null device opened onto closed descriptor ``fd`` (0..fd-1 are open), checked first: a
    character device numbered 1, 3 (Linux's null device), reached through no symbolic link."""
    try:
        null = os.open(os.devnull, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)  # the lowest free: fd
    except OSError as exc:
        _supervisor.fail_setup(f"cannot open {os.devnull} onto closed descriptor {fd}: {exc.strerror}")
    if not _is_null(os.fstat(null)):
        _supervisor.fail_setup(
            f"{os.devnull} is not the null device (a character device 1, 3): not opened onto closed "
            f"descriptor {fd}"
        )
    if null != fd:
        os.dup2(null, fd)  # inheritable
        os.close(null)
    else:
        os.set_inheritable(fd, True)  # the command is handed this one


def _is_null(st: os.stat_result) -> bool:
    return stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3)


def _stream_problem(fd: int, pipes: int, network: bool) -> str:
    """What makes open descriptor ``fd`` — one of 0, 1, 2 or of ``--pass-fds``: one rule
    (``check_handed``) — unfit to hand the command ('' when nothing). Accepted, and only these:

    - an anonymous pipe: ``/proc/self/fd/N`` reopens the same pipe, either end — so the command can
      read what others write to a pipe it was handed the write end of: a handed pipe must be the
      caller's own, shared with no one else (Reyn's spawns make fresh pipes for each launch);
    - the null device, which holds nothing;
    - a socket, which cannot be reopened, of the kinds ``_socket_problem`` accepts.

    Everything else is refused whatever its access mode, by construction rather than by a list of
    known harms: a file or a directory (metadata — mode, owner-set times, extended attributes — can
    be changed through any descriptor, even read-only, and Landlock does not govern it; a reopen
    gains the access the descriptor withheld), a terminal (``TIOCSTI`` pushes input to whoever reads
    it, and one that is no session's controlling terminal can be made the command's own), any other
    device, a named FIFO (reachable by path), an ``O_PATH`` descriptor, and the kernel's objects
    without a file type (eventfd, pidfd, epoll, signalfd…)."""
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    if flags & getattr(os, "O_PATH", 0):
        return "an O_PATH descriptor"
    st = os.fstat(fd)
    mode = st.st_mode
    if (stat.S_ISFIFO(mode) and st.st_dev == pipes) or _is_null(st):
        return ""
    if stat.S_ISSOCK(mode):
        return _socket_problem(fd, network)
    if stat.S_ISCHR(mode):
        return "a terminal" if os.isatty(fd) else "a character device other than the null device"
    kinds = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named FIFO"))
    kind = next((name for test, name in kinds if test(mode)), "")
    return kind or ("a block device" if stat.S_ISBLK(mode) else "a kernel object with no file type")


def _socket_problem(fd: int, network: bool) -> str:
    """Whether socket ``fd`` may be handed ('' when it may). Without the network: only a connected,
    not listening, unix stream or seqpacket socket (a ``socketpair`` end): it reaches its one peer
    and nothing else — a datagram socket can address any socket of the namespace it was made in (the
    caller's, not the sandbox's), an internet socket made outside the sandbox's namespace reaches
    the caller's network. With the network: that, or an internet (IPv4, IPv6) stream or datagram
    socket, the kinds the command may make itself; never a raw, packet or netlink socket, which
    carry the capabilities of the process that made them."""
    import socket  # only when a socket is handed: importing it costs a launch ~15 ms

    sock = socket.socket(fileno=fd)
    try:
        family = sock.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN)
        kind = sock.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE)
        listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        if family == socket.AF_UNIX and kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
            if listening:
                return "a listening unix socket (it would accept connections from outside the sandbox)"
            try:
                sock.getpeername()
            except OSError:
                return "a unix socket connected to nothing (it could be connected outside the sandbox)"
            return ""
        if network and family in (socket.AF_INET, socket.AF_INET6):
            if kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                return ""
            return "an internet socket neither stream nor datagram (a raw one carries its maker's capability)"
        if family in (socket.AF_INET, socket.AF_INET6):
            return "an internet socket, and the network is not granted"
        if family == socket.AF_UNIX:
            return "a unix datagram socket (it can address any socket of the namespace it was made in)"
        return f"a socket of family {family}"
    finally:
        sock.detach()


STANDARD = "one of the command's standard streams"
_ENDS = {os.O_RDONLY: "read", os.O_WRONLY: "write"}


def own_pipe(option: str, text: str, held: dict[int, str], access: int) -> int:
    """``--stop-fd N`` (``access`` O_RDONLY) or ``--verdict-fd N`` (O_WRONLY): one descriptor number
    (``descriptor_numbers``' rule), open, that end of an anonymous pipe — only a pipe's read end is
    readable exactly when its caller writes to it or every writer is gone (a file or a socket would
    end or hold the sandbox for other reasons), and a named FIFO can be opened by anyone who can
    reach its path — and that pipe held under none of the numbers in ``held`` (0, 1, 2 and
    ``--pass-fds``, which the command gets; ``held[n]`` says where ``n`` goes): an end there would
    let the command eat the stop byte or keep the pipe from ever hanging up, or write a verdict of
    its own. The pipe is compared, not the number: by (device, inode), which both ends and every copy
    of a pipe share. GrantsError else."""
    if "," in text:
        raise GrantsError(f"{option} takes one descriptor number, got {text!r}")
    (fd,) = descriptor_numbers(text, what=option)
    if fd in held:
        raise GrantsError(f"{option}: descriptor {fd} is also {held[fd]}; the command must not get it")
    try:
        info, flags = os.fstat(fd), fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        raise GrantsError(f"{option}: descriptor {fd} is not open in the launcher") from None
    if not stat.S_ISFIFO(info.st_mode) or flags & os.O_ACCMODE != access:
        raise GrantsError(f"{option}: descriptor {fd} is not the {_ENDS[access]} end of a pipe")
    if info.st_dev != pipe_device():
        raise GrantsError(f"{option}: descriptor {fd} is a named pipe (FIFO), not an anonymous one")
    for other, where in sorted(held.items()):
        try:
            same = os.path.samestat(os.fstat(other), info)
        except OSError:
            continue  # not open: holds nothing
        if same:
            raise GrantsError(
                f"{option}: descriptor {fd}'s pipe is also descriptor {other} ({where}); "
                "the command must not hold it"
            )
    return fd


def pipe_device() -> int:
    """The device of the kernel's anonymous pipes (pipefs): that of a pipe made here, then closed."""
    ends = os.pipe()
    try:
        return os.fstat(ends[0]).st_dev
    finally:
        os.close(ends[0])
        os.close(ends[1])


def close_inherited(keep: frozenset[int]) -> None:
    """Close every descriptor this process inherited but 0, 1, 2 and ``keep``, before anything else:
    the command gets only those (one left open would reach whatever it was opened on — a hidden
    folder's, say). Every open descriptor is listed in /proc/self/fd; one it cannot list fails the
    start (exit 125)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError as exc:
        _supervisor.fail_setup(
            f"cannot list the launcher's descriptors to close inherited ones: {exc.strerror}"
        )
    for name in names:
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, closed by now
