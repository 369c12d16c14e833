"""The one rule on write roots and the host's own files: a write root must not equal, contain or lie
inside a file or folder the host trusts (its profile, lock, audit log, approval store, argument key,
caches, ...).

From such a root a confined process could change what the host runs or trusts: rewrite the profile
(delete the approval rules), approve its own held call in the approval store, or plant a file
*beside* a trusted one (SQLite reads an ``approvals.db-wal`` it finds next to the store). So a
read-only mount of the file is not enough: the folder that holds a trusted file must not be writable
either, and a write root that is that folder (or any folder above it) *contains* it here.

``protected`` maps a path to what it is (``{"/ws/reyn.toml": "the host's profile"}``); paths are
compared resolved, symbolic links followed, on both sides. The host computes the mapping once per
load (``reyn_core``'s ``ToolRegistry.host_files``) and every confining surface passes it here:
``resolve_grants`` (the shell pack's commands, the mcp pack's stdio servers) and reyn-isolation's
check of a worker's grants (``RJ011``).
"""

from __future__ import annotations

import os

from ._paths import path_within as _within

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping


def write_root_clashes(write_roots: Iterable[str], protected: Mapping[str, str]) -> list[str]:
    """One sentence per write root (given as absolute paths) that equals, contains or lies inside
    paths of ``protected`` (path → what it is), naming each (at most ten per root); an empty list
    when every root is clear."""
    resolved = {_resolved(path): what for path, what in protected.items() if os.path.isabs(path)}
    clashes: list[str] = []
    for root in write_roots:
        real = os.path.realpath(root)
        found = []
        for path, what in resolved.items():
            shown = f"{shown_text(what)} ({shown_text(path)})"
            if path == real:
                found.append(f"is {shown}")
            elif _within(path, real):
                holder = "is the folder of" if os.path.dirname(path) == real else "contains"
                found.append(f"{holder} {shown}")
            elif _within(real, path):
                found.append(f"is inside {shown}")
        if found:
            more = f", and {len(found) - 10} more" if len(found) > 10 else ""
            clashes.append(f"write root {shown_text(root)} " + ", ".join(found[:10]) + more)
    return clashes


def _resolved(path: str) -> str:
    """``path`` with links resolved — unless the load resolved it already (a plugin's path is kept
    resolved, marked ``resolved``: the per-call check then reads no file system for it)."""
    return path if getattr(path, "resolved", False) is True else os.path.realpath(path)


def shown_text(text: str) -> str:
    """``text`` (a path, or what it is) as a refusal shows it: as is when printable, else quoted with
    its control characters escaped (``repr``), so no name can put lines or terminal codes into a
    message a model or an operator reads."""
    return text if text.isprintable() else repr(str(text))


def protected_problem(
    write_roots: Iterable[str], protected: Mapping[str, str], *, who: str = "a confined process"
) -> str | None:
    """Why these write roots cannot be granted to ``who`` (``write_root_clashes``), or None."""
    clashes = write_root_clashes(write_roots, protected)
    if not clashes:
        return None
    return (
        f"{who} could change what the host runs or trusts: "
        + "; ".join(clashes)
        + ". Grant a folder that holds none of the host's files (such as 'out')"
    )


def is_secret(what: object) -> bool:
    """Whether ``what`` (a value of ``protected``) marks a file no confined process may read either:
    reyn_core's ``SecretFile``, whose ``secret`` attribute is True (this package imports nothing of
    Reyn, so the mark is read, not the type)."""
    return getattr(what, "secret", False) is True


def secret_hides(roots: Iterable[str], protected: Mapping[str, str]) -> tuple[tuple[str, ...], list[str]]:
    """``(paths to hide, problems)`` for the secret files of ``protected`` and these roots (absolute
    paths: every path the launcher mounts for the grants — read and write roots, ``read_only``
    paths): each secret lying strictly inside a root — or inside a folder the launcher mounts for
    every command (the system folders, the Python installation) — is to be hidden
    (``Grants.secrets``: the launcher covers the folder holding it, ``secret_covers``); a root that
    *is* a secret or lies inside one, or is (or lies inside) the folder holding a secret file, cannot
    be granted at all — hiding it would leave nothing of the grant — and is one sentence of
    ``problems``."""
    from ._layout import SYSTEM_DIRS, interpreter_dirs

    secrets = {
        os.path.realpath(p): what for p, what in protected.items() if os.path.isabs(p) and is_secret(what)
    }
    granted = tuple(dict.fromkeys(os.path.realpath(r) for r in roots))
    fixed = tuple(os.path.realpath(d) for d in (*SYSTEM_DIRS, *interpreter_dirs()))
    hide: dict[str, None] = {}
    for root in (*granted, *fixed):
        for path in secrets:
            if _within(path, root, strict=True):
                hide[path] = None
    # a secret inside another hidden one is already out of sight
    kept = tuple(p for p in hide if not any(_within(p, q, strict=True) for q in hide))
    # the launcher covers the folder holding each hidden secret file (`secret_covers`; one lying
    # directly in a system folder is covered itself)
    covered = {
        os.path.dirname(p): p for p in kept if not os.path.isdir(p) and os.path.dirname(p) not in fixed
    }
    problems: list[str] = []
    for root in granted:
        for path, what in secrets.items():
            if _within(root, path):
                where = "is" if root == path else "lies inside"
                problems.append(f"root {root} {where} {what} ({path}), which no confined process may read")
        for holder, path in covered.items():
            if _within(root, holder):
                # the cover would take that root away; a root inside a folder holding a secret it
                # does not see (the secret hidden for no root) needs neither a cover nor a refusal
                where = "is" if root == holder else "lies inside"
                problems.append(
                    f"root {root} {where} the folder holding {secrets[path]} ({path}), which no confined "
                    "process may read: a file the host puts at that path while a command runs (a rotation, "
                    "a replacement) would be readable, so the whole folder is hidden"
                )
    return kept, problems
