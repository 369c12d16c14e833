"""reyn-approvals-sqlite: the default approval store, one SQLite file (docs/approvals.md).

Selected by a profile whose ``[approvals] backend`` is ``"sqlite"`` (the default): the entry point
``sqlite`` of the group ``reyn.approval_stores``, found, verified and locked like any other store.
Its one option goes in ``[approvals.settings]``: ``file``, the SQLite file of requests, relative to
the profile's folder (``SqliteSettings``).
"""

from __future__ import annotations

from .settings import SqliteSettings, open_store
from .store import SqliteApprovalStore

__all__ = ["SqliteApprovalStore", "SqliteSettings", "open_store"]
