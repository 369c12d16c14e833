"""A frozen registry of given definitions, registered in order: the one way the tests (and the
benchmarks) build one without a profile or a plugin; and the origin the loader stamps on a plugin's
tool, for the tests that register one by hand."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

NOTES_ORIGIN: dict[str, Any] = {
    "kind": "plugin",
    "plugin_id": "notes",
    "distribution": "reyn-notes",
    "version": "1.0",
    "tree_digest": "sha256:" + "ab" * 32,
}


def plugin_origin(**fields: Any) -> Any:
    """The ``ToolOrigin`` of a tool of plugin ``notes`` (distribution ``reyn-notes`` 1.0, with a tree
    digest), as the loader stamps it; ``fields`` override any of it (``plugin_id="shell"``,
    ``version="1.2.3"``, ``distribution=None``)."""
    from reyn_core import ToolOrigin

    return ToolOrigin(**{**NOTES_ORIGIN, **fields})


def frozen_registry(definitions: Iterable[Any], *, origin: Any = None, **builder: Any) -> Any:
    """``RegistryBuilder(**builder)`` with each of ``definitions`` registered in order (from ``origin``,
    a ``ToolOrigin``; None: the host), frozen."""
    from reyn_core.host import RegistryBuilder

    b = RegistryBuilder(**builder)
    for d in definitions:
        b.register(d, origin=origin)
    return b.freeze()
