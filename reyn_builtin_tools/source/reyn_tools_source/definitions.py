r"""``reyn_src_list`` and ``reyn_src_read`` as loading and rendering see them, read from the generated
``tools.json``, plus what a manifest cannot hold: their availability check (light: it reads only
the context and the settings). The ``@tool`` functions in ``tools.py`` are the source of truth;
after changing one, regenerate the manifest::

    python -m reyn_core.manifest reyn_tools_source.tools:TOOLS \
        > reyn_builtin_tools/source/reyn_tools_source/tools.json
"""

from __future__ import annotations

from reyn_core import lazy_definitions, read_manifest

from .availability import source_available

TOOLS = lazy_definitions(
    read_manifest(__package__),
    available={"reyn_src_list": source_available, "reyn_src_read": source_available},
)
