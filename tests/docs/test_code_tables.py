"""docs/diagnostics.md's code tables are what the code data says (issue 24, each rule once): the
page is written from reyn_core/codes.toml and reyn_isolation/codes.toml by
tests/docs/code_tables.py (``make docs-codes``), and a table edited by hand fails here."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("code_tables", Path(__file__).with_name("code_tables.py"))
assert _spec and _spec.loader
code_tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(code_tables)


def _drift(page: str, written: str) -> str:
    diff = difflib.unified_diff(
        page.splitlines(), written.splitlines(), "docs/diagnostics.md", "the data", n=0, lineterm=""
    )
    return "\n".join(line[:200] for line in list(diff)[:12])


def test_the_code_tables_are_what_the_data_writes() -> None:
    page = code_tables.PAGE.read_text(encoding="utf-8")
    written = code_tables.render(page, code_tables.code_data())
    assert page == written, (
        "docs/diagnostics.md's code tables differ from the code data (edit reyn_core/codes.toml "
        f"or reyn_isolation/codes.toml, not the tables), then run: {code_tables.REGENERATE}\n"
        + _drift(page, written)
    )


def test_a_row_edited_by_hand_is_caught_and_rewritten() -> None:
    page = code_tables.PAGE.read_text(encoding="utf-8")
    codes = code_tables.code_data()
    row = next(line for line in page.splitlines() if line.startswith("| RS001 |"))
    edited = page.replace(row, row.replace(codes["RS001"].hint.replace("|", "\\|"), "a fix written by hand"))
    assert edited != page  # the edit took
    assert code_tables.render(edited, codes) == page  # the generator restores the data's row


def test_every_code_and_each_of_its_severities_has_a_row() -> None:
    page = code_tables.PAGE.read_text(encoding="utf-8")
    codes = code_tables.code_data()
    rows = {
        tuple(c.strip() for c in line.split("|")[1:3]) for line in page.splitlines() if line.startswith("| R")
    }
    expected = {(code, info.severity) for code, info in codes.items()}
    expected |= {(code, v.severity) for code, info in codes.items() for v in info.also}
    assert expected <= rows
    assert ("RI004", "warning") in expected and ("RC007", "error") in expected  # the two-severity codes
    assert any(code.startswith("RJ0") and code not in {"RJ001", "RJ006", "RJ012"} for code in codes)


def test_a_family_without_a_table_is_an_error_not_a_silent_omission() -> None:
    page = code_tables.PAGE.read_text(encoding="utf-8")
    start = page.index("<!-- code table RL")
    end = page.index("<!-- end of code table -->", start) + len("<!-- end of code table -->")
    with pytest.raises(ValueError, match=r"no code table for the famil\(ies\) \['RL'\]"):
        code_tables.render(page[:start] + page[end:], code_tables.code_data())
