"""The supervisor an unconfined command (``sandbox = "off"``) runs under on Linux: it reaps every
descendant, even one that left the process group with ``setsid()``. (A sandboxed command has none:
the sandbox launcher's PID namespace does this, see ``process.py``.)

It is run as a script (``python -I -S supervisor.py STATUS_FD HOST_PID EXECUTABLE ARG...``), uses
only the standard library, and:

1. makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): every orphaned descendant
   — a daemonised grandchild included — is re-parented to it instead of to init;
2. asks for ``SIGTERM`` when the host process dies (``PR_SET_PDEATHSIG``);
3. runs the command in a process group of its own and waits for it;
4. when the command exits, or on ``SIGTERM`` (the host's timeout or cancellation), kills the
   command's group and then, round after round, ``SIGKILL``-s and reaps each of its own children
   until it has none: as a subreaper it then has no descendants left;
5. writes the command's exit code (negative for a signal, ``-9`` when it was stopped) to
   ``STATUS_FD`` and exits.
"""

from __future__ import annotations

import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SWEEP_LIMIT_S = 10.0


class _Stop(Exception):
    """Raised by the ``SIGTERM`` handler: stop the command now."""


def _stop(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stop


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (ImportError, OSError, AttributeError):
        return False


def _children(me: int) -> list[int]:
    """This process's direct children, from ``/proc`` (``/proc/<pid>/stat`` field 4 is the ppid)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            out.append(int(name))
    return out


def _sweep(group: int) -> None:
    """Kill the command's group (when it was started), then every child until none is left
    (bounded in time)."""
    me = os.getpid()
    deadline = time.monotonic() + SWEEP_LIMIT_S
    while time.monotonic() < deadline:
        if group:
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        for pid in _children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return  # no children: as a subreaper, no descendants either
        time.sleep(0.01)


def _exec(executable: str, argv: list[str], status_fd: int) -> None:
    """In the forked child: a group of its own, default signals, then the command."""
    try:
        os.close(status_fd)
        os.setpgid(0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        os.execv(executable, [executable, *argv])
    except BaseException as exc:  # anything here must end the child
        try:
            os.write(2, f"cannot run {executable}: {exc}\n".encode(errors="replace"))
        finally:
            os._exit(127)


def main(args: list[str]) -> int:
    status_fd, host_pid, executable, argv = int(args[0]), int(args[1]), args[2], args[3:]
    signal.signal(signal.SIGTERM, _stop)
    code: int | None = None
    pid = 0
    me = os.getpid()
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != host_pid:  # the host died before the death signal was armed
            raise _Stop
        pid = os.fork()
        if pid == 0:
            _exec(executable, argv, status_fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or already exec-ed
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except _Stop:
        if os.getpid() != me:  # stopped in the forked child before it could exec
            os._exit(127)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _sweep(pid)
    os.write(status_fd, f"{-signal.SIGKILL if code is None else code}\n".encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
