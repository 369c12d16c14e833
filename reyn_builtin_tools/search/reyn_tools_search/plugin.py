"""Entry point ``search`` in group ``reyn.plugins``: the hooks of the search pack.

The tool is the light definition of ``definitions.py`` (read from the generated ``tools.json``, with
a lazy ``"module:attr"`` handler); the ``@tool`` function in ``tools.py`` is its source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

from .definitions import TOOLS

REYN_API = 1


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register ``find_tools`` (router only), the search tool ``[surfaces.router.defer]`` offers."""
    for definition in TOOLS:
        register(definition)
