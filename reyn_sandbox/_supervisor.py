"""PID 1 of the sandbox: finishes the confinement, starts the command, reaps, forwards, reports limits.

Being init of the PID namespace is what makes "everything dies with the group" hold: when this
process exits the kernel kills every process left in the namespace, double-forked or not, and the
launcher outside has PR_SET_PDEATHSIG'd it so it cannot outlive the launcher either.
"""

from __future__ import annotations

import os
import resource

from . import _filesystem, _idmap, _landlock, _seccomp
from . import _syscalls as sc
from ._contract import LIMIT_PREFIX, SETUP_FAILED_EXIT
from ._grants import Grants
from ._layout import Layout

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms
if TYPE_CHECKING:
    import signal
    from typing import NoReturn
else:
    import _signal as signal  # signal's functions and numbers, without the enums it wraps them in (_launch)

_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_SAMPLE_SECONDS = 0.05
# Tasks of the sandbox's uid that are not the command's: this supervisor (it samples from a timer's
# signal, not from a thread: ``run``).
SUPERVISOR_TASKS = 1


class SetupError(Exception):
    """Confinement could not be completed; the command must not run (exit 125)."""


_verdict_fd: list[int] = []  # the caller's --verdict-fd, once the launcher has checked it


def report_verdicts_to(fd: int) -> None:
    """From now on, the launcher's verdicts (``verdict``) also go to ``fd``, the write end of the
    caller's verdict pipe: close-on-exec, so the launcher, PID 1 and the command's process until its
    execve hold it, and the command never does."""
    os.set_inheritable(fd, False)
    _verdict_fd[:] = [fd]


def verdict(line: str) -> None:
    """One of the launcher's verdicts — the sandbox could not be set up, or a limit ended the
    command — on stderr, and on the verdict pipe when the caller gave one: the one channel the
    command cannot write to, so a caller reads it there and never takes the command's stderr for it."""
    for fd in (2, *_verdict_fd):
        say(fd, line)


def fail_setup(reason: str) -> NoReturn:
    """Report a setup failure on one line (best effort: ``verdict``) and exit 125 without running anything."""
    verdict(f"reyn-sandbox: {reason}\n")
    os._exit(SETUP_FAILED_EXIT)


def say(fd: int, text: str) -> None:
    """Write one of the launcher's own lines to ``fd`` (1 or 2), best effort: straight to the
    descriptor, not through ``sys.stdout``/``sys.stderr`` (None when the caller started us with it
    closed; a buffer whose flush fails later). A closed, full or broken output loses the line and
    nothing else — the exit status (125, 127, the command's) never depends on it. SIGPIPE is
    ignored first (the command's start puts every signal back to its default): a process writes its
    lines last, just before it exits."""
    data = text.encode("utf-8", "backslashreplace")
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:  # EBADF, ENOSPC, EPIPE (Python ignores SIGPIPE): the line is lost, nothing else
        pass


class _Watch:
    """What the sampler saw: the peak address space of any process, and whether the process cap hit;
    and whether a sample is running (``_on_alarm``)."""

    __slots__ = ("peak_vm_bytes", "processes_hit", "sampling")

    def __init__(self) -> None:
        self.peak_vm_bytes = 0
        self.processes_hit = False
        self.sampling = False


def confine(grants: Grants, layout: Layout, cwd: str, abi: int, as_root: bool) -> None:
    """Everything between "in fresh namespaces with namespace root" and "ready to start the command"."""
    owner = (grants.uid, grants.gid) if as_root else (os.getuid(), os.getgid())
    _filesystem.build_root(layout, grants, owner, as_root)
    if as_root:
        # The bounding set is emptied while CAP_SETPCAP is still held; setresuid to a non-zero uid
        # then clears the remaining sets (no PR_SET_KEEPCAPS).
        sc.drop_bounding_and_ambient()
        os.setgroups([])
        os.setresgid(grants.gid, grants.gid, grants.gid)
        os.setresuid(grants.uid, grants.uid, grants.uid)
        # A uid change makes the process non-dumpable, which turns its /proc/self files root's;
        # the inner user namespace's maps are written there next. (It holds nothing by now.)
        sc.prctl(sc.PR_SET_DUMPABLE, 1)
    _enter_inner_user_namespace()
    sc.drop_all_capabilities()
    sc.set_no_new_privs()
    _landlock.restrict_self(
        abi,
        read_paths=["/", "/proc", "/dev", *layout.read_paths],
        write_paths=[_filesystem.TMP, _filesystem.SHM, *layout.write_paths],
        read_write_files=[f"/dev/{name}" for name in _filesystem.DEV_NODES],
        network=grants.network,
    )
    _seccomp.install(grants.network)
    # Not dumpable: the command runs as this same user in this same Landlock domain, so without this
    # it could PTRACE_ATTACH this process (or write its memory through process_vm_writev) and make it
    # run anything — free of the command's rlimits and of any seccomp filter the command adds for
    # itself (reyn_sandbox.forbid_exec). A non-dumpable process can be traced only with CAP_SYS_PTRACE
    # in the user namespace it was started in (the host's); the command's execve makes it dumpable.
    sc.prctl(sc.PR_SET_DUMPABLE, 0)
    # A session of its own: no controlling terminal, so an inherited terminal fd cannot be used to
    # push keystrokes into the operator's shell (TIOCSTI needs it to be the caller's controlling tty).
    os.setsid()
    try:
        os.chdir(cwd)
    except OSError as exc:
        raise SetupError(f"cannot enter the working directory {cwd}: {exc.strerror}") from None


def _enter_inner_user_namespace() -> None:
    """A user namespace of the sandbox's own, mapping only its uid: RLIMIT_NPROC then counts the
    sandbox's processes alone (per namespace and uid), not every process of that uid on the host."""
    uid, gid = os.getuid(), os.getgid()
    sc.unshare(sc.CLONE_NEWUSER)
    _idmap.write_id_maps("/proc/self", f"{uid} {uid} 1", f"{gid} {gid} 1", deny_setgroups=True)


def _rlimits(grants: Grants) -> tuple[tuple[int, str, int, int], ...]:
    """(resource, grant name, soft, hard) for each limit the command runs under."""
    processes = grants.max_processes + SUPERVISOR_TASKS  # the supervisor's tasks count in the namespace too
    return (
        # The hard CPU limit a second above the soft one: SIGXCPU first (reported), SIGKILL if caught.
        (resource.RLIMIT_CPU, "cpu_seconds", grants.cpu_seconds, grants.cpu_seconds + 1),
        (resource.RLIMIT_AS, "memory_bytes", grants.memory_bytes, grants.memory_bytes),
        (resource.RLIMIT_NPROC, "max_processes", processes, processes),
        (resource.RLIMIT_FSIZE, "file_size_bytes", grants.file_size_bytes, grants.file_size_bytes),
        (resource.RLIMIT_NOFILE, "open_files", grants.open_files, grants.open_files),
        (resource.RLIMIT_CORE, "", 0, 0),
    )


def rlimit_problem(grants: Grants) -> str | None:
    """Why the command could not be given the grants' limits, or None: a limit above the hard limit
    this process inherited (only a privileged process may raise one, and the command's ends
    unprivileged). Checked by the launcher before anything is set up."""
    for which, name, _soft, hard in _rlimits(grants):
        inherited = resource.getrlimit(which)[1]
        if inherited != resource.RLIM_INFINITY and hard > inherited:
            return (
                f"{name} ({hard}) is above the hard limit the launcher was started with ({inherited}): "
                "lower the grant, or raise the limit of the process that starts the launcher"
            )
    return None


def _set_limits(grants: Grants) -> None:
    for which, _name, soft, hard in _rlimits(grants):
        resource.setrlimit(which, (soft, hard))


def initial_environment() -> dict[bytes, bytes]:
    """The environment this process was started with, exactly: Python edits os.environ at start-up
    (PEP 538 sets LC_CTYPE=C.UTF-8 when the locale is C), /proc/self/environ is the kernel's copy."""
    with open("/proc/self/environ", "rb") as handle:
        entries = handle.read().split(b"\0")
    return dict(entry.split(b"=", 1) for entry in entries if b"=" in entry)


def run(grants: Grants, command: list[str], env: dict[bytes, bytes]) -> NoReturn:
    """Start the command as this namespace's second process, wait for it, exit with its status.

    Waiting reaps every process of the namespace as it exits (``wait4(-1)``); every 50 ms a one-shot
    timer's SIGALRM interrupts the wait to sample (``_sample``), which re-arms it once done — a
    sample that takes longer than 50 ms is never interrupted by the next. The wait resumes after
    each handler (PEP 475). No thread: the launch imports no ``threading`` and starts none."""
    try:
        child = os.fork()
    except OSError as exc:
        fail_setup(f"cannot start the command: {exc}")
    if child == 0:
        _exec_command(grants, command, env)
    for sig in _FORWARDED:
        signal.signal(sig, lambda signum, _frame: forward(child, signum))
    watch = _Watch()
    signal.signal(signal.SIGALRM, lambda _signum, _frame: _on_alarm(grants, watch))
    signal.setitimer(signal.ITIMER_REAL, _SAMPLE_SECONDS)
    while True:
        pid, wait_status, usage = os.wait4(-1, 0)
        if pid == child:
            break
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # no sample after this (one pending is dropped)
    signal.setitimer(signal.ITIMER_REAL, 0)
    code = os.waitstatus_to_exitcode(wait_status)
    code = 128 - code if code < 0 else code
    limit = _limit_hit(grants, wait_status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, watch)
    if limit is not None:
        verdict(f"{LIMIT_PREFIX}{limit}\n")
    os._exit(code)


def forward(child: int, signum: int) -> None:
    """Pass a signal on to `child`; one that has just exited is not an error."""
    try:
        os.kill(child, signum)
    except ProcessLookupError:
        pass


def _exec_command(grants: Grants, command: list[str], env: dict[bytes, bytes]) -> NoReturn:
    try:
        # Python ignores SIGPIPE and SIGXFSZ, a parent may have left any signal ignored, and an
        # ignored or blocked signal survives execve: every disposition back to its default and
        # nothing blocked, so the command starts as it would in a fresh session.
        sc.reset_all_signal_dispositions()
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        _set_limits(grants)
    except Exception as exc:  # nothing has run: a setup failure, one line and 125
        fail_setup(f"cannot set the command's signals and limits: {exc}")
    try:
        os.execvpe(command[0], command, {**env, b"TMPDIR": _filesystem.TMP.encode()})
    except OSError as exc:
        say(2, f"reyn-sandbox: cannot run {command[0]}: {exc.strerror}\n")
        os._exit(126 if isinstance(exc, PermissionError) else 127)
    os._exit(127)  # pragma: no cover - execvp does not return


def _limit_hit(grants: Grants, wait_status: int, cpu: float, max_rss: int, watch: _Watch) -> str | None:
    """Which limit ended the command, if one did (docs/sandbox.md: how each is detected)."""
    signalled = os.WIFSIGNALED(wait_status)
    signum = os.WTERMSIG(wait_status) if signalled else 0
    if watch.processes_hit:
        return f"max_processes ({grants.max_processes})"
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and cpu >= grants.cpu_seconds):
        return f"cpu_seconds ({grants.cpu_seconds})"
    if signum == signal.SIGXFSZ:
        return f"file_size_bytes ({grants.file_size_bytes})"
    failed = signalled or os.WEXITSTATUS(wait_status) != 0
    near_limit = watch.peak_vm_bytes >= grants.memory_bytes * 0.9 or max_rss >= grants.memory_bytes // 2
    if failed and near_limit:
        return f"memory_bytes ({grants.memory_bytes})"
    return None


def _on_alarm(grants: Grants, watch: _Watch) -> None:
    """SIGALRM: a sample when the timer has expired and none is running. The command shares this
    PID namespace and may send PID 1 a SIGALRM of its own: while the one-shot timer is still armed
    the signal is not the timer's, and during a sample (its handler may run between any two of the
    sample's bytecodes) nothing nests; either way it is dropped, and the timer stays as it was."""
    if watch.sampling or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return
    watch.sampling = True
    try:
        _sample(grants, watch)
    finally:
        watch.sampling = False


def _sample(grants: Grants, watch: _Watch) -> None:
    """One sample, every 50 ms while the command runs (SIGALRM, ``run``): the namespace's task count
    (the cap ends the command) and each process's peak VM; then the timer for the next one.

    RLIMIT_NPROC makes fork fail but a fork bomb keeps retrying forever; reaching the cap is the
    signal to end it. RLIMIT_AS makes allocations fail without any signal, so the supervisor keeps
    the kernel's high-water mark (VmPeak) to say afterwards that memory is what ran out.
    """
    tasks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        own = entry == "1"  # this supervisor: its tasks count, its (Python) address space does not
        try:
            with open(f"/proc/{entry}/status", "rb") as handle:
                text = handle.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(b"Threads:"):
                tasks += int(line.split()[1])
            elif line.startswith(b"VmPeak:") and not own:
                watch.peak_vm_bytes = max(watch.peak_vm_bytes, int(line.split()[1]) * 1024)
    if tasks >= grants.max_processes + SUPERVISOR_TASKS:
        watch.processes_hit = True
        # Every process in the namespace but this one; then the command's exit ends the wait.
        forward(-1, signal.SIGKILL)
        return
    signal.setitimer(signal.ITIMER_REAL, _SAMPLE_SECONDS)
