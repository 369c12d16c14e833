r"""``find_tools`` as loading and rendering see it, read from the generated ``tools.json`` (a lazy
``"module:attr"`` handler: the index and the ranking are imported on the first search). The
``@tool`` function in ``tools.py`` is the source of truth; after changing it, regenerate the
manifest::

    python -m reyn_core.manifest reyn_tools_search.tools:TOOLS \
        > reyn_builtin_tools/search/reyn_tools_search/tools.json
"""

from __future__ import annotations

from reyn_core import lazy_definitions, read_manifest

TOOLS = lazy_definitions(read_manifest(__package__))
