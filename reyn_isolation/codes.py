"""The ``RJ…`` diagnostic codes this backend reports, kept as data in ``codes.toml`` next to this
module (in the form of the core's own table) and written into docs/diagnostics.md by
``make docs-codes``; the core words the ones it reports itself: ``RJ001`` declaration, ``RJ006``
grants in process, ``RJ012`` no backend.

``ISOLATION_CODES`` maps each code to its ``CodeInfo`` (severity, title, hint), read and checked when
this module is imported;
``Finding`` is what the checks report, turned into a ``Diagnostic`` by ``step``.
"""

from __future__ import annotations

from dataclasses import dataclass

from reyn_core.host import CodeTable

ISOLATION_CODES = CodeTable("reyn_isolation", "codes.toml")
# checked when the backend is imported (a load imports it for its first isolated plugin): a damaged
# copy is one clear error then — the load's RJ012 for each isolated plugin — not at the first finding
ISOLATION_CODES.check()


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing this package found about an isolated plugin (a ``Diagnostic`` to be)."""

    code: str
    message: str
    tool: str | None = None
    severity: str | None = None


__all__ = ["ISOLATION_CODES", "Finding"]
