"""Writes the code tables of docs/diagnostics.md from the code data: reyn-core's
``reyn_core/codes.toml`` and reyn-isolation's ``reyn_isolation/codes.toml``, read through
``CodeTable`` (so the page shows exactly what ``Diagnostic.make`` uses, checked the same way).

Each table sits between ``<!-- code table XX: … -->`` and ``<!-- end of code table -->``, XX a code
family; the prose around the tables is hand-written. Run ``make docs-codes`` (this file) after
editing a codes.toml; tests/docs/test_code_tables.py fails while the page differs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
REGENERATE = "make docs-codes  (or: .venv/bin/python tests/docs/code_tables.py)"

_TABLE = re.compile(
    r"^(?P<open><!-- code table (?P<family>R[A-Z]{1,2})\b[^\n]*-->)\n.*?^<!-- end of code table -->$",
    re.M | re.S,
)
_HEADER = "| code | severity | example | fix |\n|---|---|---|---|"


def code_data() -> dict[str, Any]:
    """Every documented code, mapped to its ``CodeInfo``: the core's and reyn-isolation's."""
    from reyn_core.host import DIAGNOSTIC_CODES
    from reyn_isolation.codes import ISOLATION_CODES

    return {**DIAGNOSTIC_CODES, **ISOLATION_CODES}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(family: str, codes: Mapping[str, Any]) -> str:
    """The Markdown table of ``family``'s codes, by code: one row per code, and one per other severity
    the code is reported at (its ``also``)."""
    rows = [_HEADER]
    for code in sorted(c for c in codes if c[:-3] == family):
        info = codes[code]
        rows.append(f"| {code} | {info.severity} | {_cell(info.example)} | {_cell(info.hint)} |")
        rows.extend(f"| {code} | {v.severity} | {_cell(v.example)} | {_cell(v.hint)} |" for v in info.also)
    return "\n".join(rows)


def render(page: str, codes: Mapping[str, Any]) -> str:
    """``page`` with every code table rewritten from ``codes``; ``ValueError`` when a family of
    ``codes`` has no table in the page, or a table names a family without codes."""
    families = {m.group("family") for m in _TABLE.finditer(page)}
    undocumented = sorted({code[:-3] for code in codes} - families)
    if undocumented:
        raise ValueError(f"no code table for the famil(ies) {undocumented}: add a marked table to the page")
    written = _TABLE.sub(
        lambda m: f"{m.group('open')}\n{table(m.group('family'), codes)}\n<!-- end of code table -->", page
    )
    empty = sorted(f for f in families if table(f, codes) == _HEADER)
    if empty:
        raise ValueError(f"code table(s) {empty} name a family without codes")
    return written


def main() -> int:
    page = PAGE.read_text(encoding="utf-8")
    written = render(page, code_data())
    if written != page:
        PAGE.write_text(written, encoding="utf-8")
        print(f"rewrote the code tables of {PAGE}")
    else:
        print(f"{PAGE}: the code tables are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
