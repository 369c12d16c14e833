"""The launcher process: `python -I -m reyn_sandbox --grants JSON -- command…`.

It checks the grants and the kernel, unshares the namespaces, and forks the sandbox's PID 1
(`_supervisor`), which confines itself and starts the command. The launcher stays outside to wait:
its exit status is the command's, and its death (PR_SET_PDEATHSIG on PID 1) ends the sandbox.
`--probe` alone launches a no-op (``_probe_launch``) through every step a launch takes: what
`status()` asks under a seccomp filter (`_status._launcher_probe`). Before anything else it opens
the null device onto whichever of 0, 1, 2 its caller left closed (`_descriptors.standard_descriptors`);
it refuses on them and on every descriptor its `--pass-fds` names — all the command inherits, one
rule — what the command could reopen for more than it was handed (`_descriptors.check_handed`), then closes
every descriptor it inherited but 0, 1, 2, those its `--pass-fds` names
(`_descriptors.close_inherited`), its `--stop-fd` (`_descriptors.own_pipe`): the read end of the
caller's pipe, whose closing or a byte written to it ends the sandbox (`_wait`), and its
`--verdict-fd`: the write end of the caller's pipe where its verdicts go (the sandbox could not be
set up, a limit ended the command: `_supervisor.verdict`), the one channel the command cannot write
to.
"""

from __future__ import annotations

import os
import select
import sys

from . import _descriptors, _idmap, _layout, _supervisor
from . import _syscalls as sc
from ._contract import CANNOT_CONFINE
from ._grants import Grants, GrantsError, descriptor_numbers
from ._status import kernel_status, mount_api_problem

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms (_grants.py)
if TYPE_CHECKING:
    import signal
    from collections.abc import Sequence
    from typing import NoReturn
else:
    # signal's own functions and numbers: the `signal` module only wraps them in enums, and `enum`
    # (with the functools and collections it brings) was among the largest of the launch's imports
    # (docs/performance.md, "The launcher's imports, trimmed"; a test pins that none is imported).
    import _signal as signal

USAGE = (
    "usage: python -m reyn_sandbox [--pass-fds N,…] [--stop-fd N] [--verdict-fd N] --grants JSON -- "
    "COMMAND [ARG…]  "
    "(or: --probe)"
)
PROBE = "--probe"
PASS_FDS = "--pass-fds"
STOP_FD = "--stop-fd"
VERDICT_FD = "--verdict-fd"


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
    imported — would only delay the caller seeing the command's exit. Its own lines are written
    straight to their descriptors (``_supervisor.say``): nothing is left buffered to flush."""
    os._exit(main())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command confined; return its exit status (125: the sandbox could not be set up).
    With the single word ``--probe``: launch a no-op the same way (``_probe_launch``); exit 0 (and
    ``landlock_abi N`` on stdout), 125 with the launcher's one line, or the no-op's failure."""
    _descriptors.standard_descriptors()
    words = list(sys.argv[1:] if argv is None else argv)
    probing = words == [PROBE]
    try:
        keep, stop, own, words = _options(words)
        grants, command = _probe_launch() if probing else parse(words)
    except GrantsError as exc:
        _supervisor.fail_setup(str(exc))
    _descriptors.check_handed(sorted(keep), PASS_FDS, grants.network)
    _descriptors.close_inherited(keep | own)
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
    if stop is not None and _readable(stop, timeout_ms=0):
        _supervisor.fail_setup(f"stopped through {STOP_FD} before the command started")
    alive_r, alive_w = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        _supervisor.fail_setup(f"cannot start the sandbox: {exc}")
    if pid == 0:
        os.close(alive_w)
        if stop is not None:
            os.close(stop)  # the caller's control of the sandbox is the launcher's alone
        _start_init(grants, layout, cwd, abi, as_root, command, env, alive_r)
    os.close(alive_r)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, lambda signum, _frame: _supervisor.forward(pid, signum))
    code = os.waitstatus_to_exitcode(_wait(pid, stop))
    if probing and code == 0:
        _supervisor.say(1, f"landlock_abi {abi}\n")
    return 128 - code if code < 0 else code


def _probe_launch() -> tuple[Grants, list[str]]:
    """What ``--probe`` launches: a no-op (this interpreter, doing nothing), with one read root (the
    folder holding this package: bound from its checked descriptor, idmapped as root) and small
    limits, none above the caller's hard limits (a caller that launches with small grants is not
    told "unavailable" for a limit of the probe's own), through ``main``'s own steps — the kernel
    checks, the namespaces, the mount-API probe, the view built with the mount API, pivot_root, the
    inner user namespace, Landlock, seccomp, the limits and execve. So ``status()``, which asks it
    under a seccomp filter, says available only where such a launch runs. Grants decide the rest
    (network, ``hide`` covers, write roots)."""
    import resource

    from ._contract import PACKAGE_PARENT
    from ._identity import pinned

    def within(which: int, wanted: int, above_grant: int = 0) -> int:
        # No limit above the caller's hard one (the launcher would refuse a grant above it, naming
        # a limit the operator never set): the no-op runs under what a real launch could ask.
        hard = resource.getrlimit(which)[1]
        return wanted if hard == resource.RLIM_INFINITY else max(1, min(wanted, hard - above_grant))

    grants = Grants(
        read_roots=(os.path.realpath(PACKAGE_PARENT),),
        cpu_seconds=within(resource.RLIMIT_CPU, 10, above_grant=1),
        memory_bytes=within(resource.RLIMIT_AS, 512 * 1024 * 1024),
        max_processes=within(resource.RLIMIT_NPROC, 4, above_grant=_supervisor.SUPERVISOR_TASKS),
        file_size_bytes=within(resource.RLIMIT_FSIZE, 1024 * 1024),
        open_files=within(resource.RLIMIT_NOFILE, 64),
        tmp_bytes=1024 * 1024,
    )
    return pinned(grants), [sys.executable, "-I", "-S", "-c", ""]


def _options(words: list[str]) -> tuple[frozenset[int], int | None, frozenset[int], list[str]]:
    """The options before ``--grants``, each at most once: the descriptors ``--pass-fds N,…`` hands to the
    command, the ``--stop-fd N`` (``_descriptors.own_pipe``: the read end of the caller's stop pipe), the
    ``--verdict-fd N`` (the write end of the caller's verdict pipe, where the launcher's verdicts go from
    then on: ``_supervisor.verdict``), and the words after them; GrantsError for a repeated option, a
    descriptor that is not a number from 3 to 2**31 - 1 (one rule with ``launcher_argv``:
    ``_grants.descriptor_numbers``) or not open, and a stop or verdict descriptor whose pipe the command
    would also get (``_descriptors.own_pipe``). Returns the descriptors the launcher keeps open too."""
    values: dict[str, str] = {}
    while words[:1] in ([PASS_FDS], [STOP_FD], [VERDICT_FD]):
        if len(words) < 2 or words[0] in values:
            raise GrantsError(USAGE)
        values[words[0]] = words[1]
        words = words[2:]
    keep = descriptor_numbers(values.get(PASS_FDS, ()), what=PASS_FDS)
    for fd in keep:
        try:
            os.fstat(fd)
        except OSError:
            raise GrantsError(f"{PASS_FDS}: descriptor {fd} is not open in the launcher") from None
    held = {
        0: _descriptors.STANDARD,
        1: _descriptors.STANDARD,
        2: _descriptors.STANDARD,
        **{fd: f"in {PASS_FDS}" for fd in keep},
    }
    stop = _descriptors.own_pipe(STOP_FD, values[STOP_FD], held, os.O_RDONLY) if STOP_FD in values else None
    own: set[int] = set() if stop is None else {stop}
    if VERDICT_FD in values:
        if stop is not None:
            held[stop] = f"the {STOP_FD}"
        verdict = _descriptors.own_pipe(VERDICT_FD, values[VERDICT_FD], held, os.O_WRONLY)
        _supervisor.report_verdicts_to(verdict)
        own.add(verdict)
    return frozenset(keep), stop, frozenset(own), words


def _wait(pid: int, stop: int | None) -> int:
    """PID 1's wait status. With a stop descriptor, the launcher waits for either PID 1's exit or
    the descriptor becoming readable — the caller wrote to it, or every write end closed (the caller
    stopped the call, or died: its descriptors close with it, whichever thread started us) — and then
    kills PID 1, which makes the kernel kill every process in the sandbox. The kernel reaps them all
    before PID 1's exit can be waited for, so when this returns nothing of the sandbox is left."""
    if stop is not None:
        pidfd: int | None = None
        try:
            pidfd = os.pidfd_open(pid)
        except OSError as exc:  # fail closed: a sandbox its caller could not stop does not run on
            _supervisor.say(2, f"reyn-sandbox: cannot watch the sandbox for {STOP_FD}; ended it: {exc}\n")
        if pidfd is None or pidfd not in _readable(pidfd, stop):
            _supervisor.forward(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def _readable(*fds: int, timeout_ms: int | None = None) -> set[int]:
    """Those of ``fds`` that are readable or hung up, waiting up to ``timeout_ms`` (None: until one
    is). ``poll``, not ``select``: a caller's descriptor number may be above select's 1023."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _events in poller.poll(timeout_ms)}


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
    _idmap.write_id_maps("/proc/self", f"{uid} {uid} 1", f"{gid} {gid} 1", deny_setgroups=True)


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
        if _readable(alive_r, timeout_ms=0):
            os._exit(125)
        os.close(alive_r)
    except Exception as exc:  # any setup failure (a path that cannot be encoded too): one line, 125
        _supervisor.fail_setup(str(exc) or type(exc).__name__)
    _supervisor.run(grants, command, env)
