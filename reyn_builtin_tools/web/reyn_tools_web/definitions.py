r"""``web_fetch`` and ``web_search`` as loading and rendering see them, read from the generated
``tools.json`` (name, description, parameters schema, gates, lazy ``"module:attr"`` handler), plus
what a manifest cannot hold: the availability checks (light: they read only the settings).

The one source of truth is the ``@tool`` functions in ``tools.py`` (imported on a tool's first
call, with httpx), so loading the pack and rendering its tools cost only this module and a JSON
file. After changing one, regenerate the manifest (``tests/packs/test_lazy_definitions.py`` fails
until you do)::

    python -m reyn_core.manifest reyn_tools_web.tools:TOOLS \
        > reyn_builtin_tools/web/reyn_tools_web/tools.json
"""

from __future__ import annotations

from reyn_core import lazy_definitions, read_manifest

from .availability import fetch_available, search_available

TOOLS = lazy_definitions(
    read_manifest(__package__),
    available={"web_fetch": fetch_available, "web_search": search_available},
)
