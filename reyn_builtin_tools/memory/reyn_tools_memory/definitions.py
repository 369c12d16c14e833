r"""The five memory tools as loading and rendering see them, read from the generated ``tools.json``
(name, description, parameters schema, gates, lazy ``"module:attr"`` handler).

The one source of truth is the ``@tool`` functions in ``tools.py`` (with their argument models; the
SQLite store is in ``store.py``), imported on a tool's first call. After changing one, regenerate
the manifest (``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_memory.tools:MEMORY_TOOLS \
        > reyn_builtin_tools/memory/reyn_tools_memory/tools.json
"""

from __future__ import annotations

from reyn_core import lazy_definitions, read_manifest

MEMORY_TOOLS = lazy_definitions(read_manifest(__package__))
