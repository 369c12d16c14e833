"""How a worker is started: its sandbox grants, its command line and its scrubbed environment.

The worker is a fresh interpreter (``python -I -B -X pycache_prefix=/dev/null/reyn-no-bytecode -m
reyn_isolation.worker``: no ``PYTHON*`` variables, no user site, no bytecode written, and no cached
bytecode read: every module it imports, Reyn's and the plugin's, is compiled from its source, the
bytes the tree digest and the lock cover), never a fork of the host. It may read the Python installation (the
launcher adds it), the code of Reyn and of the plugin, and what the operator granted; it may write
only the granted write roots; network only when granted. Its environment is a fixed minimum plus the
granted variables' values: nothing else of the host's environment reaches it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from reyn_isolation.grants import GrantedPermissions

WORKER_MODULE = "reyn_isolation.worker"
NO_BYTECODE = "/dev/null/reyn-no-bytecode"
"""The worker's ``pycache_prefix``: CPython then looks for bytecode only under it, never in a
``__pycache__`` beside a source (which the tree digest skips, and whose header checks only the
source's mtime and size). Nothing can exist under ``/dev/null`` (not a folder), so it reads none."""
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "REYN_BYTECODE_CACHE": "off",
}


class IsolationUnavailable(Exception):
    """This machine cannot start a confined worker (the message says why); the plugin is refused."""


def code_roots(plugin_locations: Iterable[str]) -> list[str]:
    """What the worker must read to run: Reyn's own packages (the core, the sandbox launcher, this
    distribution) and the plugin's import locations
    (outside the Python installation, which the launcher grants itself)."""
    import reyn_core
    import reyn_isolation
    import reyn_sandbox

    roots = [
        os.path.dirname(os.path.abspath(str(m.__file__))) for m in (reyn_core, reyn_sandbox, reyn_isolation)
    ]
    roots += [os.path.abspath(path) for path in plugin_locations]
    prefixes = {os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix)}
    out: list[str] = []
    for root in roots:
        real = os.path.realpath(root)
        if any((real + os.sep).startswith(prefix) for prefix in prefixes) or real in out:
            continue
        out.append(real)
    return out


def worker_command(
    granted: GrantedPermissions,
    plugin_locations: Iterable[str],
    host_env: Mapping[str, str],
    *,
    secrets: Iterable[str] = (),
) -> tuple[Callable[[int], list[str]], dict[str, str], dict[str, Any]]:
    """``(argv, env, what is enforced)`` of a worker with exactly ``granted``, ``secrets`` (the host's
    secret files inside its roots, ``host_paths.secret_findings``) covered — ``argv`` given the read
    end of the start's stop pipe (``reyn_sandbox.StopPipe``: the one way a worker's sandbox is
    stopped, by the host or by its death); raises ``IsolationUnavailable`` when the kernel cannot
    confine it (fail closed)."""
    try:
        from reyn_sandbox import Grants, GrantsError, SandboxUnavailable, launcher_argv, status
    except ImportError:
        raise IsolationUnavailable(
            "isolation needs the reyn-sandbox distribution, which is not installed"
        ) from None
    grants_kw: dict[str, Any] = {
        "read_roots": tuple(dict.fromkeys([*code_roots(plugin_locations), *granted.read])),
        "write_roots": tuple(granted.write),
        "secrets": tuple(secrets),
        "network": granted.network,
        "memory_bytes": granted.memory_mb * 1024 * 1024,
        # calls of a long-lived worker add up: its CPU budget is a day's, hung calls are stopped by timeouts
        "cpu_seconds": 24 * 3600,
    }
    command = [sys.executable, "-I", "-B", "-X", f"pycache_prefix={NO_BYTECODE}", "-m", WORKER_MODULE]
    try:
        grants = Grants(**grants_kw)
        # checked, and every root's identity taken, once, now: each (re)start is confined by these
        first = launcher_argv(command, grants)
        checked = Grants.from_json(first[first.index("--grants") + 1])
    except (SandboxUnavailable, GrantsError) as exc:
        raise IsolationUnavailable(str(exc)) from None

    def argv(stop_fd: int) -> list[str]:
        """The launcher's argv watching ``stop_fd``, the read end of the start's stop pipe."""
        return launcher_argv(command, checked, stop_fd=stop_fd)

    env = dict(BASE_ENV)
    for name in granted.environment:
        if name in host_env:
            env[name] = host_env[name]
    current = status()
    enforced = {
        "landlock_abi": current.landlock_abi,
        "enforced": list(current.enforced),
        "grants": grants.to_json(),
    }
    return argv, env, enforced


__all__ = ["BASE_ENV", "NO_BYTECODE", "IsolationUnavailable", "WORKER_MODULE", "code_roots", "worker_command"]
