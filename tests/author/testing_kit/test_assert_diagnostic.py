"""``assert_diagnostic`` / ``assert_no_diagnostics``: assertions on loader diagnostics by code."""

from __future__ import annotations

import pytest

from reyn_core.loading.diagnostics import Diagnostic
from reyn_testing import assert_diagnostic, assert_no_diagnostics

SETTINGS = Diagnostic.make("RC001", "invalid settings: precission is not allowed", plugin="example")
COLLISION = Diagnostic.make("RT004", "tool name 'x' is claimed twice", plugin="b", tool="x")
UNUSED = Diagnostic.make("RC004", "configuration for plugin 'z' that is not enabled", plugin="z")
ALL = (SETTINGS, COLLISION, UNUSED)


def test_returns_the_matching_diagnostic():
    assert assert_diagnostic(ALL, "RT004") is COLLISION


def test_filters_by_plugin_tool_severity_and_message():
    assert assert_diagnostic(ALL, "RT004", plugin="b", tool="x", severity="error") is COLLISION
    assert assert_diagnostic(ALL, "RC001", message_contains="precission") is SETTINGS


def test_a_missing_code_fails_listing_every_diagnostic_present():
    with pytest.raises(AssertionError) as info:
        assert_diagnostic(ALL, "RP001")
    text = str(info.value)
    assert "expected diagnostic RP001" in text
    assert "RC001 error [example]" in text and "RT004 error [b/x]" in text


def test_a_filter_that_does_not_match_fails():
    with pytest.raises(AssertionError, match="expected diagnostic RT004 plugin='a'"):
        assert_diagnostic(ALL, "RT004", plugin="a")


def test_an_unknown_code_is_called_out():
    with pytest.raises(AssertionError, match="'RC01' is not a known diagnostic code"):
        assert_diagnostic(ALL, "RC01")


def test_no_error_diagnostics_ignores_warnings():
    assert_no_diagnostics([UNUSED])
    with pytest.raises(AssertionError, match="expected no error diagnostics"):
        assert_no_diagnostics(ALL)


def test_no_diagnostics_of_any_severity():
    with pytest.raises(AssertionError, match="RC004"):
        assert_no_diagnostics([UNUSED], severity=None)


def test_an_empty_source_says_none():
    with pytest.raises(AssertionError, match=r"found:\n  \(none\)"):
        assert_diagnostic([], "RC001")


def test_a_source_that_is_not_diagnostics_is_a_type_error():
    with pytest.raises(TypeError, match="expected a LoadResult"):
        assert_diagnostic(42, "RC001")
