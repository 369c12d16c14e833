"""The diagnostic codes are data (issue 24, each rule once): ``codes.toml`` read by ``CodeTable`` on
first use — never by ``import reyn_core`` — and checked entry by entry, a bad entry being an error
that names the file and the code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reyn_core.code_table import CodeTable, CodeTableError, parse_code_table

GOOD = """
[RZ001]
severity = "error"
title = "a title"
hint = "the fix"
example = "`a message`"

[[RZ001.also]]
severity = "warning"
example = "`a milder message`"

[RZ002]
severity = "info"
title = "another"
hint = "none"
example = "`fine`"
"""


def test_a_well_formed_table_parses_in_file_order_with_its_variants() -> None:
    codes = parse_code_table(GOOD, "t.toml")
    assert list(codes) == ["RZ001", "RZ002"]
    info = codes["RZ001"]
    assert (info.severity, info.title, info.hint, info.example) == (
        "error",
        "a title",
        "the fix",
        "`a message`",
    )
    assert [(v.severity, v.hint) for v in info.also] == [("warning", "the fix")]  # no hint: the code's own
    assert info.hint_at("warning") == "the fix" and codes["RZ002"].hint_at("error") == "none"


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (
            GOOD.replace('severity = "info"', 'severity = "fatal"'),
            "t.toml: RZ002: severity 'fatal' is not one of",
        ),
        (GOOD.replace('hint = "none"', 'hint = "  "'), "t.toml: RZ002: 'hint' must be a non-empty string"),
        (GOOD.replace('hint = "none"\n', ""), "t.toml: RZ002: 'hint' must be a non-empty string, got None"),
        (GOOD.replace('title = "another"', "title = 3"), "t.toml: RZ002: 'title' must be a non-empty string"),
        (
            GOOD.replace('hint = "none"', 'hint = "none"\nhnit = "x"'),
            r"t.toml: RZ002: unknown keys \['hnit'\]",
        ),
        (GOOD.replace("[RZ002]", "[rz002]"), "t.toml: rz002: not a code"),
        (
            GOOD.replace('severity = "warning"', 'severity = "error"'),
            "RZ001: also #1: severity 'error' is already",
        ),
        (
            GOOD.replace('example = "`a milder', 'hnt = "x"\nexample = "`a milder'),
            r"RZ001: also #1: unknown keys",
        ),
        (GOOD.replace("[[RZ001.also]]", "[RZ001.also]"), r"RZ001: 'also' must be an array of tables"),
        ('RZ003 = "x"', "t.toml: RZ003: must be a table"),
        (GOOD + "\n[RZ002]\n", "t.toml: invalid TOML"),
    ],
    ids=[
        "bad-severity",
        "blank-hint",
        "missing-hint",
        "title-not-text",
        "unknown-key",
        "not-a-code",
        "variant-repeats-severity",
        "variant-unknown-key",
        "also-not-array",
        "entry-not-table",
        "duplicate",
    ],
)
def test_a_bad_entry_is_an_error_naming_the_code(bad: str, says: str) -> None:
    with pytest.raises(CodeTableError, match=says):
        parse_code_table(bad, "t.toml")


def test_the_shipped_tables_are_read_once_on_first_use() -> None:
    table = CodeTable("reyn_core", "codes.toml")
    assert not table.loaded and repr(table) == "CodeTable('reyn_core/codes.toml')"
    assert table["RD001"].severity == "error" and table.loaded
    assert table._table() is table._table()  # parsed once
    with pytest.raises(KeyError):
        table["RZ999"]


def test_import_reyn_core_reads_no_code_table() -> None:
    script = (
        "import sys, reyn_core, reyn_core.host\n"
        "from reyn_core.loading import diagnostics\n"
        "before = diagnostics.CODES.loaded\n"
        "diagnostics.Diagnostic.make('RD001', 'x')\n"
        "print(before, diagnostics.CODES.loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_a_registration_error_takes_its_codes_hint_from_the_table() -> None:
    from reyn_core import ToolDefinition, ToolRegistrationError
    from reyn_core.host import DIAGNOSTIC_CODES, RegistryBuilder

    quiet = ToolDefinition(name="quiet", description="  ", parameters={"type": "object"}, handler=lambda: 1)
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(quiet)
    assert (info.value.code, info.value.hint) == ("RT003", DIAGNOSTIC_CODES["RT003"].hint)
    assert ToolRegistrationError("RT002", "x", hint="mine").hint == "mine"  # an explicit hint wins
    assert ToolRegistrationError("RZ999", "x").hint == ""  # a code not in the table: no hint
