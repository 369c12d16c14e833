"""Reyn source pack (plugin id ``source``): ``reyn_src_list`` and ``reyn_src_read`` let the chat
router read the installed, digest-verified files of reyn-core and of the enabled plugins, so it can
answer questions about Reyn itself. Router only; see docs/packs/source.md."""

from __future__ import annotations

from .settings import SourceSettings

__all__ = ["SourceSettings"]
