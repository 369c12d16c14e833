"""Tests of the example plugin, written with the reyn pytest kit (fixtures from reyn-core).

``reyn_call`` loads the installed plugin through the real loader with a profile that enables only
it, and calls tools through the real dispatcher, as the router or the phase would.
"""

import pytest

from reyn_testing import registry_from_plugin


def test_router_shows_the_two_chat_tools(reyn_call):
    assert reyn_call.router_tools() == ["convert_units", "text_stats"]


def test_phase_shows_all_three_ops_when_the_cluster_is_allowed(reyn_call):
    assert reyn_call.phase_ops(["example"]) == ["convert_units", "markdown_outline", "text_stats"]


def test_phase_default_ops_do_not_include_the_example_cluster(reyn_call):
    assert reyn_call.phase_ops(["file", "ask_user"]) == []


def test_converts_kilometres_to_miles(reyn_call):
    result = reyn_call.router("convert_units", {"value": 42.195, "from_unit": "km", "to_unit": "mi"})
    assert result.unwrap() == {"value": 26.2188, "unit": "mi", "dimension": "length"}


def test_converts_celsius_to_fahrenheit(reyn_call):
    assert (
        reyn_call.router("convert_units", {"value": 100, "from_unit": "C", "to_unit": "F"}).data["value"]
        == 212
    )


def test_converts_binary_data_sizes(reyn_call):
    assert (
        reyn_call.router("convert_units", {"value": 1, "from_unit": "GiB", "to_unit": "MiB"}).data["value"]
        == 1024
    )


def test_arguments_may_arrive_as_the_json_text_a_model_sends(reyn_call):
    result = reyn_call.router("convert_units", '{"value": 1, "from_unit": "h", "to_unit": "min"}')
    assert result.data["value"] == 60


def test_units_of_different_dimensions_are_refused_with_a_hint(reyn_call):
    result = reyn_call.router("convert_units", {"value": 1, "from_unit": "kg", "to_unit": "km"})
    assert result.error_kind == "invalid_arguments"
    assert "cannot convert mass (kg) to length (km)" in result.error_message


def test_below_absolute_zero_is_refused(reyn_call):
    result = reyn_call.router("convert_units", {"value": -500, "from_unit": "C", "to_unit": "K"})
    assert result.error_kind == "invalid_arguments"
    assert "absolute zero" in result.error_message


def test_unknown_unit_is_refused_with_its_json_pointer(reyn_call):
    result = reyn_call.router("convert_units", {"value": 1, "from_unit": "furlong", "to_unit": "m"})
    assert result.error_kind == "invalid_arguments"
    assert [e["path"] for e in result["error"]["errors"]] == ["/from_unit"]


def test_a_wrong_type_is_refused(reyn_call):
    result = reyn_call.router("convert_units", {"value": "ten", "from_unit": "m", "to_unit": "cm"})
    assert result.error_kind == "invalid_arguments"


def test_an_unexpected_argument_is_refused(reyn_call):
    result = reyn_call.router("convert_units", {"value": 1, "from_unit": "m", "to_unit": "cm", "round": 2})
    assert result.error_kind == "invalid_arguments"


@pytest.mark.reyn_plugin("example", settings={"precision": 2})
def test_precision_setting_rounds_to_significant_digits(reyn_call):
    assert (
        reyn_call.router("convert_units", {"value": 1, "from_unit": "mi", "to_unit": "km"}).data["value"]
        == 1.6
    )


def test_text_stats_counts_words_sentences_and_paragraphs(reyn_call):
    text = "The cat sat. The cat ran!\n\nA dog barked at the cat"
    stats = reyn_call.router("text_stats", {"text": text, "top_n": 2}).unwrap()
    assert stats["words"] == 12
    assert stats["sentences"] == 3
    assert stats["paragraphs"] == 2
    assert stats["lines"] == 3
    assert stats["top_words"] == [{"word": "cat", "count": 3}, {"word": "barked", "count": 1}]


def test_text_stats_of_an_empty_text_is_all_zero(reyn_call):
    stats = reyn_call.router("text_stats", {"text": ""}).unwrap()
    assert stats["words"] == stats["sentences"] == stats["paragraphs"] == 0
    assert stats["top_words"] == []


@pytest.mark.reyn_plugin("example", settings={"words_per_minute": 100, "stopwords": []})
def test_settings_change_reading_time_and_stopwords(reyn_call):
    stats = reyn_call.router("text_stats", {"text": "the " * 50, "top_n": 1}).unwrap()
    assert stats["reading_time_minutes"] == 0.5
    assert stats["top_words"] == [{"word": "the", "count": 50}]


def test_markdown_outline_runs_as_a_phase_op(reyn_call):
    doc = "# Title\ntext\n## Part\n```\n# not a heading\n```\n#### too deep\n"
    outline = reyn_call.phase("markdown_outline", {"text": doc}, allowed_ops=["example"]).unwrap()
    assert outline == [{"level": 1, "title": "Title", "line": 1}, {"level": 2, "title": "Part", "line": 3}]


def test_markdown_outline_is_refused_on_the_router_by_its_author(reyn_call):
    result = reyn_call.router("markdown_outline", {"text": "# x"})
    assert result.error_kind == "gate_refused"
    assert result["error"]["layer"] == "role"


def test_a_phase_whose_allowed_ops_exclude_the_tool_is_refused(reyn_call):
    result = reyn_call.phase("text_stats", {"text": "x"}, allowed_ops=["file"])
    assert result.error_kind == "gate_refused"
    assert result["error"]["layer"] == "call"


def test_tools_carry_the_plugin_origin(reyn_registry):
    origin = reyn_registry.get("convert_units").origin
    assert (origin.kind, origin.plugin_id, origin.distribution) == (
        "plugin",
        "example",
        "reyn-plugin-example",
    )


def test_an_unknown_settings_key_refuses_the_plugin(reyn_load, assert_diagnostic):
    result = reyn_load({"plugins": {"enable": ["example"], "example": {"settings": {"precission": 3}}}})
    assert "convert_units" not in result.registry
    diagnostic = assert_diagnostic(result, "RC001", plugin="example")
    assert "precission" in diagnostic.message


def test_the_module_builds_a_registry_without_installation():
    registry = registry_from_plugin("reyn_example.plugin", plugin_id="example", settings={"precision": 3})
    assert [t.name for t in registry] == ["convert_units", "markdown_outline", "text_stats"]
    assert registry.plugin_settings["example"].precision == 3
