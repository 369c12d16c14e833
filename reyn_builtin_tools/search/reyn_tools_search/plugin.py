"""Entry point ``search`` in group ``reyn.plugins``: the hooks of the search pack.

The tool is the light definition of ``definitions.py`` (read from the generated ``tools.json``, with
a lazy ``"module:attr"`` handler); the ``@tool`` function in ``tools.py`` is its source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

from .definitions import TOOLS
from .settings import SearchSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[SearchSettings]:
    """``[plugins.search.settings]`` is validated against ``SearchSettings``."""
    return SearchSettings


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """``RQ001`` (error) when ``semantic = true`` and the semantic extra is not installed: every
    search would then fail (``runtime_missing``), so the load says so first."""
    from importlib.util import find_spec

    from reyn_core import settings_as

    if not settings_as(settings, SearchSettings).semantic or find_spec("wordllama") is not None:
        return []
    return [
        {
            "code": "RQ001",
            "severity": "error",
            "message": "semantic = true, but the semantic extra (wordllama) is not installed: find_tools "
            "answers runtime_missing",
            "hint": "pip install 'reyn-tools-search[semantic]', or set semantic = false",
        }
    ]


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register ``find_tools`` (router only), the search tool ``[surfaces.router.defer]`` offers."""
    for definition in TOOLS:
        register(definition)
