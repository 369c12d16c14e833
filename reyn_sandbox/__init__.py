"""reyn-sandbox: run a command confined by the kernel to the operator's grants.

Whatever the command runs — including code a model wrote — can read only the read roots, write only
the write roots, open no internet socket unless network is granted, see no other process, and never
outlive or outgrow its limits. The launcher confines itself and then runs the command, so it works
wherever a command line is accepted: spawn `launcher_argv(command, grants)` instead of `command`.

This package is a leaf (standard library only, nothing of reyn_core) so anything can use it.
"""

from __future__ import annotations

import sys

from ._contract import LAUNCHER_BOOT, LIMIT_PREFIX, SETUP_FAILED_EXIT
from ._grants import Grants, GrantsError, descriptor_numbers
from ._paths import path_within

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs a launch ~15 ms (_grants.py)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ._grant_keys import GrantKeys
    from ._profile_grants import (
        GRANT_KEYS,
        LIMIT_KEYS,
        LIMIT_MINIMUMS,
        OPT_OUT,
        PATH_KEYS,
        check_grant,
        describe_grants,
        grant_entry_problem,
        limit_overrides,
        limit_problem,
        resolve_grants,
        unavailable_reason,
    )
    from ._protected import protected_problem, secret_hides, write_root_clashes
    from ._status import PRETEND_ENV, SandboxStatus, SandboxUnavailable, status
    from ._stop import StopPipe, caller_pipe

__all__ = [
    "GRANT_KEYS",
    "LIMIT_KEYS",
    "LIMIT_MINIMUMS",
    "OPT_OUT",
    "PATH_KEYS",
    "PRETEND_ENV",
    "SETUP_FAILED_EXIT",
    "GrantKeys",
    "Grants",
    "GrantsError",
    "forbid_exec",
    "forbid_processes",
    "forbid_unix_sockets",
    "SandboxStatus",
    "SandboxUnavailable",
    "StopPipe",
    "caller_pipe",
    "check_grant",
    "describe_grants",
    "grant_entry_problem",
    "launcher_argv",
    "limit_exceeded",
    "limit_overrides",
    "limit_problem",
    "path_within",
    "protected_problem",
    "resolve_grants",
    "secret_hides",
    "status",
    "unavailable_reason",
    "write_root_clashes",
]

_LAZY = {
    # GrantKeys imports typing: only a pack's settings ask for it, never the launcher (_grant_keys.py)
    "GrantKeys": "._grant_keys",
    # the grant keys of a profile, checked and resolved: the host's side, never the launcher's
    **dict.fromkeys(
        "GRANT_KEYS LIMIT_KEYS LIMIT_MINIMUMS OPT_OUT PATH_KEYS check_grant describe_grants "
        "grant_entry_problem limit_overrides limit_problem resolve_grants unavailable_reason".split(),
        "._profile_grants",
    ),
    # the kernel probe (ctypes, Landlock): imported when something is confined or the status asked
    # for, not by a pack whose settings only declare the grant keys at load
    "PRETEND_ENV": "._status",
    "SandboxStatus": "._status",
    "SandboxUnavailable": "._status",
    "status": "._status",
    # the caller's side of a launch's stop pipe: imported by the callers that start launchers
    "StopPipe": "._stop",
    "caller_pipe": "._stop",
    # the rule on write roots and the host's files: imported when grants are resolved or checked
    "protected_problem": "._protected",
    "secret_hides": "._protected",
    "write_root_clashes": "._protected",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module, __name__), name)


def require_available() -> SandboxStatus:
    """`status()`, raising `SandboxUnavailable` (fail closed) when commands cannot be confined."""
    from ._status import require_available as require

    return require()


def launcher_argv(
    command: Sequence[str],
    grants: Grants,
    *,
    pass_fds: Iterable[int] = (),
    stop_fd: int | None = None,
    verdict_fd: int | None = None,
) -> list[str]:
    """The argv that runs `command` confined by `grants`.

    Spawn it with your own (scrubbed) environment; the launcher passes it through, setting only
    TMPDIR. The command gets descriptors 0, 1 and 2 (/dev/null for any the caller left closed) and
    those named in `pass_fds` (spawn the launcher with them open, e.g. `subprocess`'s `pass_fds`);
    the launcher closes every other it inherits. Each one it gets passes one rule: the command can
    reopen what a descriptor is open on through /proc/self/fd, past every cover of the grants, so
    the launcher refuses (125) anything but an anonymous pipe, a socket, the null device, or another
    object open for reading and writing (no ``O_PATH`` descriptor, no directory, no file opened one
    way only) — hand a pipe or a socketpair.
    `stop_fd`, the read end of a pipe whose write end the caller keeps (spawn the launcher with it
    open too; the command never gets it): the moment the caller writes to the pipe or every write
    end closes — the caller closed it, or died — the launcher kills the sandbox, every process in it,
    waits until the kernel has reaped them all, and exits `128 + 9`; a pipe stopped before the
    command started exits 125 (docs/sandbox.md, "Stopping a launch"). `StopPipe` is that pipe's
    caller side.
    `verdict_fd`, the write end of a pipe whose read end the caller keeps (spawn the launcher with it
    open; the command never gets it): the launcher writes its verdicts there too — the line of a
    setup failure (exit 125), the `limit exceeded` line — so a caller reads them from a channel the
    command cannot write to, never from the command's stderr (docs/sandbox.md, "The verdict pipe").
    A root given without its identity gets it here (`Grants.identities`: the launcher refuses
    to start if another file is at its path by then). Raises `SandboxUnavailable` when this kernel
    cannot confine (fail closed), and `GrantsError` for an empty command, a root whose path goes
    through a symbolic link, a `pass_fds` entry, `stop_fd` or `verdict_fd` that is not a descriptor
    number from 3 to 2**31 - 1, or a `stop_fd` or `verdict_fd` also in `pass_fds` or equal.
    """
    if isinstance(command, (str, bytes)) or not command or not all(isinstance(a, str) for a in command):
        raise GrantsError(f"command must be a non-empty sequence of strings, got {command!r}")
    passed = descriptor_numbers(pass_fds)  # read once: a generator is not consumed by the check
    stop = () if stop_fd is None else descriptor_numbers((stop_fd,), what="stop_fd")
    if set(stop) & set(passed):
        raise GrantsError(f"stop_fd {stop_fd} is also in pass_fds; the command must not get it")
    verdict = () if verdict_fd is None else descriptor_numbers((verdict_fd,), what="verdict_fd")
    if set(verdict) & {*passed, *stop}:
        raise GrantsError(f"verdict_fd {verdict_fd} is also in pass_fds or is stop_fd: a pipe of its own")
    require_available()
    from ._identity import pinned

    return [
        sys.executable,
        "-I",
        "-S",
        "-c",
        LAUNCHER_BOOT,
        *(["--pass-fds", ",".join(map(str, passed))] if passed else []),
        *(["--stop-fd", str(stop[0])] if stop else []),
        *(["--verdict-fd", str(verdict[0])] if verdict else []),
        "--grants",
        pinned(grants).to_json(),
        "--",
        *command,
    ]


def forbid_exec() -> None:
    """From now on, no program starts from this process or anything it forks (execve and execveat
    fail with EPERM): for a confined Python program that must not run others, such as an isolated
    plugin's worker granted no ``subprocess``. Irreversible. Raises `SandboxUnavailable` off Linux,
    `OSError` when the kernel refuses the filter."""
    from ._status import require_available as require

    require(launcher=False)
    from ._seccomp import install_no_exec

    install_no_exec()


def forbid_processes() -> None:
    """From now on, this process makes no other process (fork, vfork and a clone that is not a
    thread's fail with EPERM; threads still start), and so neither do its programs: for a confined
    Python program granted no ``subprocess``, whose rlimits (memory, CPU, file size) are per process
    — without this, each fork would bring a fresh allowance. Irreversible. Raises
    `SandboxUnavailable` off Linux, `OSError` when the kernel refuses the filter."""
    from ._status import require_available as require

    require(launcher=False)
    from ._seccomp import install_no_processes

    install_no_processes()


def forbid_unix_sockets() -> None:
    """From now on, no unix socket can be created by this process or anything it forks
    (socket(AF_UNIX) fails with EACCES; socketpair still works): for a confined program that must
    not talk to services whose socket files lie inside its read or write roots — the kernel lets a
    process connect to a socket file on a read-only mount, and Landlock up to ABI 7 does not check
    connect(2). Irreversible. Raises `SandboxUnavailable` off Linux, `OSError` when the kernel
    refuses the filter."""
    from ._status import require_available as require

    require(launcher=False)
    from ._seccomp import install_no_unix_sockets

    install_no_unix_sockets()


def limit_exceeded(stderr: str) -> str | None:
    """The limit that ended a confined command, from its stderr — e.g. `"cpu_seconds (60)"` — or None.

    The launcher writes `reyn-sandbox: limit exceeded: <field> (<value>)` as the last line, after
    everything the command wrote. stderr is the command's channel too, so a command can print such a
    line itself: treat it as the reason to show, not as proof. Give it instead what the launcher
    wrote to its `verdict_fd` (`launcher_argv`), which the command cannot write to: that is proof.
    """
    lines = stderr.rstrip("\n").rsplit("\n", 1)
    last = lines[-1] if lines else ""
    return last[len(LIMIT_PREFIX) :] if last.startswith(LIMIT_PREFIX) else None
