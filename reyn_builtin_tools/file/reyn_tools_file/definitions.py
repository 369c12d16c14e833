r"""The seven file tools as loading and rendering see them, read from the generated ``tools.json``
(name, description, parameters schema, gates, lazy ``"module:attr"`` handler), plus the light code
a manifest cannot hold: the write tools' availability check.

The one source of truth is the ``@tool`` functions in ``tools.py`` (imported on a tool's first call,
so loading the pack and rendering its tools cost only this module and a JSON file). After changing
one, regenerate the manifest (``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_file.tools:TOOLS \
        > reyn_builtin_tools/file/reyn_tools_file/tools.json
"""

from __future__ import annotations

from reyn_core import ToolContext, ToolRuntimeMissing, lazy_definitions, read_manifest, settings_as

from .settings import FileSettings


def writable(ctx: ToolContext) -> bool:
    """Gate layer 3 of the write tools: available only when a write root is configured."""
    if not settings_as(ctx, FileSettings).write_roots:
        raise ToolRuntimeMissing(
            'no write root is configured; set [plugins.file.settings] write_roots = ["out"] '
            "in the profile to allow writes below out/"
        )
    return True


TOOLS = lazy_definitions(
    read_manifest(__package__),
    available={name: writable for name in ("write_file", "edit_file", "delete_file")},
)
