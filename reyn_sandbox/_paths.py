"""The one path-containment predicate of the sandbox, reyn-isolation and the packs that confine.

Paths are compared as text, component by component: ``/w/a`` lies inside ``/w`` but ``/w-old`` does
not. No link is resolved and nothing is read: callers pass paths that are absolute and normalized
already (``os.path.realpath`` when links matter), and decide themselves which side to resolve.
"""

from __future__ import annotations

import os


def path_within(path: str, root: str, *, strict: bool = False) -> bool:
    """Whether ``path`` is ``root`` or lies below it (with ``strict``: lies below it, not equal).

    Both must be absolute and normalized (no ``..``, ``.`` or doubled separators); a trailing
    separator on ``root`` is ignored, so ``/`` holds every absolute path."""
    if path == root:
        return not strict
    return path.startswith(root.rstrip(os.sep) + os.sep)
