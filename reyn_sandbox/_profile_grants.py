"""The grant keys as an operator's profile writes them — the one place they are checked and resolved.

A pack that confines processes (the shell pack's commands, the mcp pack's stdio servers) declares
the same keys in its settings: ``read_roots``, ``write_roots``, ``network``, ``hide``, ``read_only``,
the limits (``LIMIT_KEYS``, unset: the launcher's defaults) and ``sandbox`` (``"required"`` or
``"off"``). Roots are relative to a base directory (the workspace, a server's ``cwd``) or absolute.
``check_grant`` (with ``grant_entry_problem`` and ``limit_problem``) is the one validator of those
keys (a pack's settings model calls it, so every pack refuses the same entries with the same
words); ``resolve_grants`` turns them into the launcher's ``Grants`` (refusing a write root over
the host's own files, ``_protected``); ``describe_grants`` words them
for an error; ``unavailable_reason`` says why the kernel cannot confine here.
"""

from __future__ import annotations

import os

from ._paths import path_within

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ._grants import Grants

_MIB = 1024 * 1024

LIMIT_KEYS = ("cpu_seconds", "memory_bytes", "max_processes", "file_size_bytes", "open_files", "tmp_bytes")
"""The limit keys, named as the launcher's ``Grants`` fields."""
LIMIT_MINIMUMS = {
    "cpu_seconds": 1,
    "memory_bytes": 16 * _MIB,
    "max_processes": 1,
    "file_size_bytes": 1,
    "open_files": 16,
    "tmp_bytes": _MIB,
}
"""The smallest value a profile may give each limit (below it, nothing useful runs)."""
PATH_KEYS = ("read_roots", "write_roots", "hide", "read_only")
"""The path keys: each a list of directories, relative to a base directory or absolute."""
GRANT_KEYS = ("read_roots", "write_roots", "network", "hide", "read_only", *LIMIT_KEYS, "sandbox")
"""Every grant key a confining pack's settings take."""
PSEUDO_FS_PREFIXES = ("/proc", "/sys", "/dev")
OPT_OUT = 'sandbox = "off"'


def grant_entry_problem(key: str, path: str, *, relative_to: str) -> str | None:
    """Why ``path`` cannot be an entry of the path key ``key`` (one of ``PATH_KEYS``), or None.

    An entry is a directory relative to ``relative_to`` (words for the base, e.g. "the workspace")
    or absolute, never empty, without NUL or ``..``; a root is never inside a pseudo-filesystem."""
    if not path or "\x00" in path or ".." in path.split("/"):
        return (
            f"{key} entry {path!r} must be a directory relative to {relative_to} or absolute, without "
            "'..' (such as 'out', or '.' for all of it)"
        )
    if key in ("read_roots", "write_roots") and any(
        path == p or path.startswith(p + "/") for p in PSEUDO_FS_PREFIXES
    ):
        return (
            f"{key} entry {path!r} is inside a pseudo-filesystem ({', '.join(PSEUDO_FS_PREFIXES)}); "
            "its entries are kernel state, not files"
        )
    return None


def limit_problem(key: str, value: object) -> str | None:
    """Why ``value`` cannot be the limit ``key`` (None, unset, is fine: the launcher's default)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < LIMIT_MINIMUMS[key]:
        return f"{key} must be a whole number of at least {LIMIT_MINIMUMS[key]}, got {value!r}"
    return None


def check_grant(key: str, value: Any, *, relative_to: str) -> Any:
    """``value`` of the grant key ``key`` when it is allowed; ``GrantsError`` (a ``ValueError``, so a
    settings model reports it under the key) with ``grant_entry_problem``'s or ``limit_problem``'s
    words otherwise. Keys other than the path and limit keys are returned unchecked."""
    from ._grants import GrantsError

    if key in PATH_KEYS:
        problems = [grant_entry_problem(key, entry, relative_to=relative_to) for entry in value]
    elif key in LIMIT_KEYS:
        problems = [limit_problem(key, value)]
    else:
        problems = []
    for problem in problems:
        if problem is not None:
            raise GrantsError(problem)
    return value


def limit_overrides(limits: Mapping[str, int | None]) -> dict[str, int]:
    """The limits a profile sets (the launcher's defaults apply to the rest)."""
    return {k: v for k in LIMIT_KEYS if (v := limits.get(k)) is not None}


def describe_grants(keys: Any) -> str:
    """The grants of ``keys`` (anything with the grant keys as attributes, such as a pack's settings)
    in one line, for errors and diagnostics (``read_roots=['.'] ...``)."""
    limits = " ".join(f"{k}={v}" for k, v in limit_overrides(_limits(keys)).items())
    return (
        f"read_roots={list(keys.read_roots)} write_roots={list(keys.write_roots)} "
        f"network={str(keys.network).lower()} hide={list(keys.hide)}"
        + (f" {limits}" if limits else " (default limits)")
    )


def _limits(keys: Any) -> dict[str, int | None]:
    return {k: getattr(keys, k, None) for k in LIMIT_KEYS}


def _real(base: str, entries: Sequence[str]) -> list[str]:
    return [os.path.realpath(os.path.join(base, os.path.expanduser(entry))) for entry in entries]


def _existing(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(path for path in paths if os.path.exists(path))  # False also when this user cannot look


def resolve_grants(base: str, keys: Any, protected: Mapping[str, str]) -> Grants:
    """The launcher's ``Grants`` for ``keys`` (anything with the grant keys as attributes, such as a
    pack's settings), roots resolved against ``base`` (relative ones, and ``~``) to their real paths;
    limits left unset keep the launcher's defaults. A write root that does not exist yet is created
    (the operator declared it writable); a missing read root, hidden or read-only path is left out.

    ``protected`` (required: the host's own files, path → what it is, as a call's
    ``ToolContext.host_files``) is checked first: a write root that equals, contains or lies inside
    one of them raises ``GrantsError`` naming the file and what it is (``_protected``), and nothing
    is created. Each root is resolved once: the paths checked are the paths granted, and each carries
    the identity of what was found there right after the check (``Grants.identities``), which the
    launcher checks again at the bind. The secret ones (``_protected.secret_hides``) lying inside a
    mounted path (a read or write root, a ``read_only`` path) are the grants' ``secrets``, which the
    launcher covers even when missing (``_secret_covers``); a mounted path that is one or lies inside
    one raises ``GrantsError``."""
    from ._grants import Grants, GrantsError
    from ._identity import make_dirs, pinned
    from ._protected import protected_problem, secret_hides

    if not hasattr(protected, "items"):
        raise TypeError(f"resolve_grants(protected=...) must map paths to what they are, not {protected!r}")
    real_base = os.path.realpath(base)
    write_roots = _real(real_base, keys.write_roots)
    problem = protected_problem(write_roots, protected) or _nested_problem(real_base, keys, write_roots)
    if problem is not None:
        raise GrantsError(problem)
    read_roots = _existing(_real(real_base, keys.read_roots))
    # every path the launcher mounts: a read_only path outside the write roots is readable too (the
    # write roots over a secret are refused above already; here, defence in depth)
    mounted = (*read_roots, *_real(real_base, keys.read_only), *write_roots)
    secrets, problems = secret_hides(mounted, protected)
    if problems:
        raise GrantsError(
            "a confined process could read the host's secrets: "
            + "; ".join(problems[:10])
            + ". Grant folders that hold none of them (the host's secrets lying inside a granted "
            "folder are hidden)"
        )
    for path in write_roots:
        if not os.path.lexists(path):
            make_dirs(path, f"write root {path}")
    limits: dict[str, Any] = limit_overrides(_limits(keys))
    return pinned(
        Grants(
            read_roots=read_roots,
            write_roots=_existing(write_roots),
            network=keys.network,
            hide=_existing(_real(real_base, keys.hide)),
            secrets=secrets,
            read_only=_existing(_real(real_base, keys.read_only)),
            **limits,
        )
    )


def _links(path: str) -> list[str]:
    """Where each symbolic link ``os.path.realpath(path)`` follows is stored, in order (one component
    at a time, as the kernel resolves it; a loop ends the walk, as it ends realpath's)."""
    found: list[str] = []
    pending = path.split("/")
    done = "/"
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        try:
            target = os.readlink(here)
        except OSError:  # not a link, or nothing there: realpath keeps the name too
            done = here
            continue
        if here in found or len(found) >= 40:
            break
        found.append(here)
        done = "/" if target.startswith("/") else done
        pending[:0] = target.split("/")
    return found


def _nested_problem(base: str, keys: Any, write_roots: Sequence[str]) -> str | None:
    """Why these grants let a confined process choose, by a symbolic link it plants, what a later
    resolution grants, or None: an entry of any path key resolved through a link stored inside one
    of the write roots (the command can re-point it), a read or write root whose path runs through
    one of the write roots (it is readable there already). (A ``read_only`` path inside a write root
    can only leave it through a link stored there: the first check refuses it.)"""
    for key in PATH_KEYS:
        for entry in getattr(keys, key):
            path = os.path.normpath(os.path.join(base, os.path.expanduser(entry)))
            for link in _links(path):
                holder = next((w for w in write_roots if path_within(link, w, strict=True)), None)
                if holder is not None:
                    return (
                        f"{key} entry {entry!r} goes through the symbolic link {link}, inside the write "
                        f"root {holder}: a confined command could re-point it, and the next call would "
                        "grant, or fail to cover, whatever it points to. Give the real path"
                    )
    for key, entries, kind in (
        ("read_roots", keys.read_roots, "read"),
        ("write_roots", keys.write_roots, "write"),
    ):
        for entry in entries:
            path = os.path.normpath(os.path.join(base, os.path.expanduser(entry)))
            real = os.path.realpath(path)
            holder = next(
                (
                    w
                    for w in write_roots
                    if path_within(path, w, strict=True) or path_within(real, w, strict=True)
                ),
                None,
            )
            if holder is not None:
                return (
                    f"{key} entry {entry!r} lies inside the write root {holder}: a confined command could "
                    f"replace it with a symbolic link to any folder, which the next call would grant as a "
                    f"{kind} root. It is readable through the write root already; grant folders side by side"
                )
    return None


def unavailable_reason() -> str | None:
    """Why the kernel cannot confine processes here, or None when it can."""
    from ._status import status

    found = status()
    if not found.available:
        return str(found.reason or "the kernel cannot confine processes here")
    return None
