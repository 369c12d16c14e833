"""No module of reyn_core is over 400 lines (issue 24's bar): a longer one holds two concepts, and
is split along them (docs/architecture.md, "Where new code goes")."""

from __future__ import annotations

from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "reyn_core"
LIMIT = 400


def test_no_core_module_is_over_400_lines():
    long = {
        str(p.relative_to(CORE)): n
        for p in sorted(CORE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert long == {}
