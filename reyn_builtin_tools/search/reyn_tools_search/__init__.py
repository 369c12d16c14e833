"""Reyn search pack (plugin id ``search``): ``find_tools``, the gate-respecting tool search that the
router's deferral (``[surfaces.router.defer]``) offers in place of the tools it leaves out.

- ``reyn_tools_search.index``: ``search_tools`` (rank, for a request, the tools the gates offer a
  caller), ``ToolIndex`` / ``tool_index`` (the index a frozen registry owns per visible set),
  ``ToolMatch``, ``cut_query``;
- ``reyn_tools_search.ranking``: BM25F over a tool's fields and the options measured
  (docs/large-registries.md);
- ``reyn_tools_search.tools``: the ``find_tools`` tool.

Importing this package imports none of them: loading reads only ``tools.json`` (docs/packs/search.md).
"""

from __future__ import annotations

__all__: list[str] = []
