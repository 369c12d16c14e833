"""The launcher process: `python -I -m reyn_sandbox --grants JSON -- command…`.

It checks the grants and the kernel, unshares the namespaces, and forks the sandbox's PID 1
(`_supervisor`), which confines itself and starts the command. The launcher stays outside to wait:
its exit status is the command's, and its death (PR_SET_PDEATHSIG on PID 1) ends the sandbox.
`--probe` alone runs its checks of the kernel, up to and inside its namespaces, and no command:
what `status()` asks under a seccomp filter (`_status._launcher_probe`).
"""

from __future__ import annotations

import os
import select
import signal
import sys
from collections.abc import Sequence

from . import _layout, _supervisor
from . import _syscalls as sc
from ._contract import CANNOT_CONFINE
from ._grants import Grants, GrantsError
from ._status import kernel_status, mount_api_problem

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms (_grants.py)
if TYPE_CHECKING:
    from typing import NoReturn

USAGE = "usage: python -m reyn_sandbox --grants JSON -- COMMAND [ARG…]  (or: --probe)"


def parse(argv: Sequence[str]) -> tuple[Grants, list[str]]:
    """`--grants JSON -- command…` → (grants, command); GrantsError on anything else."""
    args = list(argv)
    if len(args) < 4 or args[0] != "--grants" or args[2] != "--":
        raise GrantsError(USAGE)
    return Grants.from_json(args[1]), args[3:]


def launch() -> NoReturn:
    """The launcher process's entry: `main()`, then exit at once with its status.

    Nothing is left to tear down by then (the launcher writes nothing on success, holds no file of
    its own open, starts no thread), and Python's finalization — freeing every module the launcher
    imported — would only delay the caller seeing the command's exit."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: the caller started us with that descriptor closed
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command confined; return its exit status (125: the sandbox could not be set up).
    With the single word ``--probe``: only check that this kernel lets the launcher confine
    (``probe``), exit 0 or 125."""
    words = sys.argv[1:] if argv is None else argv
    if list(words) == ["--probe"]:
        return probe()
    try:
        grants, command = parse(words)
    except GrantsError as exc:
        _supervisor.fail_setup(str(exc))
    abi = _kernel_abi()
    limits = _supervisor.rlimit_problem(grants)
    if limits is not None:
        _supervisor.fail_setup(limits)
    try:
        layout = _layout.plan(grants)
        cwd = os.getcwd()
        env = _supervisor.initial_environment()
        _layout.check_working_directory(layout, cwd)
        if os.geteuid() == 0:
            _layout.check_write_roots(layout, grants.uid, grants.gid)
    except (OSError, ValueError) as exc:
        _supervisor.fail_setup(str(exc))
    as_root = os.geteuid() == 0
    _enter_namespaces(grants, as_root)
    try:
        # The caller's death ends the launcher, whose death ends the sandbox (see _supervisor). Set
        # after unshare: the kernel clears it on every credential change, a new user namespace too.
        sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError as exc:
        _supervisor.fail_setup(f"cannot create the sandbox's namespaces: {exc}")
    alive_r, alive_w = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        _supervisor.fail_setup(f"cannot start the sandbox: {exc}")
    if pid == 0:
        os.close(alive_w)
        _start_init(grants, layout, cwd, abi, as_root, command, env, alive_r)
    os.close(alive_r)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda signum, _frame: _supervisor.forward(pid, signum))
    _, wait_status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(wait_status)
    return 128 - code if code < 0 else code


def probe() -> int:
    """Whether this kernel lets the launcher confine, checked as a launch checks it — the kernel,
    then the namespaces and the mount API inside them (``_enter_namespaces``) — without a command:
    0, or exit 125 with the launcher's one line. ``status()`` runs it under a seccomp filter."""
    _kernel_abi()
    _enter_namespaces(Grants(), os.geteuid() == 0)
    return 0


def _kernel_abi() -> int:
    """The Landlock ABI, after the launcher's first check of the kernel; exit 125 when it cannot confine."""
    current = kernel_status()
    if not current.available or current.landlock_abi is None:
        _supervisor.fail_setup(f"{CANNOT_CONFINE}{current.reason}")
    return current.landlock_abi


def _enter_namespaces(grants: Grants, as_root: bool) -> None:
    """Unshare the sandbox's namespaces (``_unshare``), then probe the mount API there, where the
    launcher may mount: the kernel's answer to each probe is EINVAL, any other one refuses the start
    with the words ``status()`` reports (``_status.mount_api_problem``)."""
    try:
        _unshare(grants, as_root)
    except OSError as exc:
        _supervisor.fail_setup(f"cannot create the sandbox's namespaces: {exc}")
    problem = mount_api_problem(may_mount=True)
    if problem is not None:
        _supervisor.fail_setup(f"{CANNOT_CONFINE}{problem}")


def _unshare(grants: Grants, as_root: bool) -> None:
    """New mount, PID, IPC (and, without network, network) namespaces; unprivileged callers get them
    through a user namespace mapping only their own ids, root directly."""
    flags = sc.CLONE_NEWNS | sc.CLONE_NEWPID | sc.CLONE_NEWIPC
    if not grants.network:
        flags |= sc.CLONE_NEWNET
    if as_root:
        sc.unshare(flags)
        return
    uid, gid = os.getuid(), os.getgid()
    sc.unshare(flags | sc.CLONE_NEWUSER)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def _start_init(
    grants: Grants,
    layout: _layout.Layout,
    cwd: str,
    abi: int,
    as_root: bool,
    command: list[str],
    env: dict[bytes, bytes],
    alive_r: int,
) -> None:
    """In the new PID namespace as PID 1: tie our life to the launcher, confine, run the command."""
    try:
        _supervisor.confine(grants, layout, cwd, abi, as_root)
        # Only now: each credential change during confinement cleared it. The launcher may have died
        # before this prctl; its end of the pipe closed means it did.
        sc.prctl(sc.PR_SET_PDEATHSIG, signal.SIGKILL)
        if select.select([alive_r], [], [], 0)[0]:
            os._exit(125)
        os.close(alive_r)
    except Exception as exc:  # any setup failure (a path that cannot be encoded too): one line, 125
        _supervisor.fail_setup(str(exc) or type(exc).__name__)
    _supervisor.run(grants, command, env)
