"""A frozen registry of given definitions, registered in order: the one way the tests (and the
benchmarks) build one without a profile or a plugin."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def frozen_registry(definitions: Iterable[Any], **builder: Any) -> Any:
    """``RegistryBuilder(**builder)`` with each of ``definitions`` registered in order, frozen."""
    from reyn_core.host import RegistryBuilder

    b = RegistryBuilder(**builder)
    for d in definitions:
        b.register(d)
    return b.freeze()
