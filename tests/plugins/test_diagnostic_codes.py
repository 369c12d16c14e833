"""Every diagnostic code is defined once (reyn_core/codes.toml, from which docs/diagnostics.md's
tables are written: tests/docs/test_code_tables.py), and used codes exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reyn_core.loading.diagnostics import CODES, Diagnostic

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"""["'](R[CDIJLPST]\d{3})["']""")


@pytest.mark.parametrize("code", sorted(CODES))
def test_a_diagnostic_of_every_code_gets_the_datas_severity_and_hint(code):
    info = CODES[code]
    d = Diagnostic.make(code, "what went wrong")
    assert (d.severity, d.hint) == (info.severity, info.hint)
    assert d.hint and info.title and info.example  # documented: the doc row is written from these
    for variant in info.also:  # the same code at another severity takes that severity's hint
        assert Diagnostic.make(code, "x", severity=variant.severity).hint == variant.hint


def test_a_code_not_in_the_table_is_an_error_without_a_hint():
    d = Diagnostic.make("RZ999", "a plugin's own code")
    assert (d.severity, d.hint) == ("error", "")
    assert "RZ999" not in CODES and CODES.get("RZ999") is None


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
