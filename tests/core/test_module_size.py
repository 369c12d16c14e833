"""No module of reyn_core is over 400 lines (issue 24's bar): a longer one holds two concepts, and
is split along them (docs/architecture.md, "Where new code goes"). The kernel sandbox and
reyn-isolation, which hold the host's confinement, follow the same rule."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400


@pytest.mark.parametrize("package", ["reyn_core", "reyn_sandbox", "reyn_isolation"])
def test_no_module_is_over_400_lines(package: str) -> None:
    top = ROOT / package
    long = {
        str(p.relative_to(top)): n
        for p in sorted(top.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert long == {}
