"""Paths in approval conditions, compared as the file pack resolves them — by components, not text.

A requested path is taken from the workspace when relative (the workspace with its links resolved),
``.`` and empty components are dropped, and a ``..`` anywhere makes the path unresolvable (the file
pack refuses it; a condition treats it as outside every root, failing closed). A root is the
workspace joined with the operator's root, links resolved. "Inside" is a component-wise prefix, so
``out/drafts-evil`` is not inside ``out/drafts``, and ``out/./drafts/../x`` is never inside anything.
Links *below* a root are not followed here: the file pack refuses a path through one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def workspace_root(workspace: Path) -> Path:
    """The workspace as paths resolve against it: its links resolved."""
    return Path(os.path.realpath(workspace))


def requested_parts(path: str, workspace: Path) -> tuple[str, ...] | None:
    """The absolute components (below ``/``) that ``path`` names, or None when it has a ``..``
    segment or a NUL byte (never inside anything)."""
    if "\x00" in path:
        return None
    parts = tuple(p for p in path.split("/") if p not in ("", "."))
    if ".." in parts:
        return None
    return parts if path.startswith("/") else workspace_root(workspace).parts[1:] + parts


def root_parts(root: str, workspace: Path) -> tuple[str, ...]:
    """The components of an operator's root, relative to the workspace, links resolved."""
    return Path(os.path.realpath(workspace_root(workspace) / root)).parts[1:]


def within(path: str, roots: Iterable[str], workspace: Path) -> bool:
    """Whether ``path`` resolves inside one of ``roots`` (all relative to ``workspace``)."""
    parts = requested_parts(path, workspace)
    if parts is None:
        return False
    for root in roots:
        rparts = root_parts(root, workspace)
        if parts[: len(rparts)] == rparts:
            return True
    return False
