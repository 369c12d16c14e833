"""The web pack's plugin module (entry point ``web``): settings model and tool registration.

The tools are the light definitions of ``definitions.py`` (read from the generated ``tools.json``,
with lazy ``"module:attr"`` handlers), so that loading, listing and rendering this pack never import
httpx; the ``@tool`` functions in ``tools.py`` are their source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reyn_core import hookimpl, settings_as

from .definitions import TOOLS
from .settings import WebSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[WebSettings]:
    """``[plugins.web.settings]``."""
    return WebSettings


@hookimpl
def reyn_register_tools(register: Any, settings: Any) -> None:
    """Register ``web_fetch`` and ``web_search``; availability is decided per call from settings."""
    for definition in TOOLS:
        register(definition)


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """RW001 (web_fetch is off) and RW002 (no usable search backend), for ``reyn doctor``."""
    from .availability import diagnostics

    return diagnostics(settings)


@hookimpl
def reyn_trusted_files(settings: Any, workspace: Path) -> dict[str, str]:
    """``fetch.ca_bundle``, the extra CAs ``web_fetch`` trusts: a process that could add one could read
    and forge every fetch. A relative one against the process's working directory, where ``ssl``
    opens it on every call (not the workspace: the file named is the file opened)."""
    bundle = settings_as(settings, WebSettings).fetch.ca_bundle
    return {str(Path(bundle).absolute()): "the web pack's CA bundle"} if bundle else {}
