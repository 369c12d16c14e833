"""Every diagnostic code is defined once, documented with an example and a fix, and used codes exist."""

from __future__ import annotations

import re
from pathlib import Path

from reyn_core.loading.diagnostics import CODES, Diagnostic

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"""["'](R[CDIJLPST]\d{3})["']""")


def test_every_code_has_a_documented_row_with_example_and_fix():
    page = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code, info in CODES.items():
        rows = [line for line in page.splitlines() if line.startswith(f"| {code} |")]
        assert rows, f"{code} is not documented in docs/diagnostics.md"
        cells = [c.strip() for c in rows[0].strip("|").split("|")]
        assert len(cells) == 4 and all(cells), f"{code}: row needs severity, example and fix"
        assert info.severity in {c.strip() for r in rows for c in r.split("|")}


def test_every_code_used_in_reyn_core_is_defined():
    used = set()
    for path in (ROOT / "reyn_core").rglob("*.py"):
        used |= set(CODE.findall(path.read_text(encoding="utf-8")))
    assert used, "the scan found no codes at all"
    assert sorted(used - set(CODES)) == []


def test_make_takes_severity_and_hint_from_the_code_table():
    d = Diagnostic.make("RC004", "configured but not enabled", plugin="x")
    assert d.severity == "warning" and d.hint == CODES["RC004"].hint
    assert d.render().startswith("RC004 warning [x]: configured but not enabled — fix: ")
    assert d.to_json()["plugin"] == "x"


def test_an_explicit_hint_and_severity_win():
    d = Diagnostic.make("RI004", "decorate it", severity="warning", hint="add @hookimpl")
    assert (d.severity, d.hint) == ("warning", "add @hookimpl")
