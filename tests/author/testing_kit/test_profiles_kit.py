"""``plugin_profile``, ``to_profile`` and ``load_with_profile``: profiles for tests, the real loader."""

from __future__ import annotations

import pytest

from reyn_core import tool
from reyn_core.loading.step1_profile.profile import Profile, ProfileError
from reyn_testing import (
    assert_diagnostic,
    assert_no_diagnostics,
    load_with_profile,
    plugin_profile,
    to_profile,
)


def test_plugin_profile_enables_only_that_plugin():
    assert plugin_profile("example") == {"features": {"plugins": True}, "plugins": {"enable": ["example"]}}


def test_plugin_profile_carries_settings_and_plugin_table_keys():
    profile = plugin_profile("example", {"precision": 2}, prefix="ex_", tools={"exclude": ["text_stats"]})
    assert profile["plugins"]["example"] == {
        "prefix": "ex_",
        "tools": {"exclude": ["text_stats"]},
        "settings": {"precision": 2},
    }


def test_toml_text_dict_and_path_give_the_same_profile(tmp_path):
    text = '[plugins]\nenable = ["example"]\n[plugins.example.settings]\nprecision = 2\n'
    path = tmp_path / "reyn.toml"
    path.write_text(text)
    data = {"plugins": {"enable": ["example"], "example": {"settings": {"precision": 2}}}}
    profiles = [to_profile(text), to_profile(data), to_profile(path)]
    assert {p.enabled for p in profiles} == {("example",)}
    assert {p.plugin("example").settings["precision"] for p in profiles} == {2}


def test_a_profile_object_passes_through_and_none_is_empty():
    profile = Profile.from_toml_text('[plugins]\nenable = ["x"]\n')
    assert to_profile(profile) is profile
    assert to_profile(None).enabled == ()


def test_a_named_profile_is_applied():
    data = {"plugins": {"enable": []}, "profiles": {"ci": {"plugins": {"enable": ["example"]}}}}
    assert to_profile(data, profile_name="ci").enabled == ("example",)


def test_a_typo_raises_profile_error_with_the_key_path():
    with pytest.raises(ProfileError, match="enabel"):
        to_profile({"plugins": {"enabel": ["example"]}})


def test_malformed_toml_raises_profile_error():
    with pytest.raises(ProfileError):
        to_profile("[plugins\nenable = [")


def test_other_types_are_refused():
    with pytest.raises(TypeError, match="TOML text, a dict, a path or a Profile"):
        to_profile(42)  # type: ignore[arg-type]


def test_an_empty_profile_loads_nothing():
    result = load_with_profile(None)
    assert len(result.registry) == 0
    assert all(p.status == "discovered" for p in result.report.plugins)


def test_enabling_a_missing_plugin_is_diagnosed_and_the_rest_loads(example_installed):
    result = load_with_profile({"plugins": {"enable": ["no_such_plugin_xyz", "example"]}})
    assert_diagnostic(result, "RD001", plugin="no_such_plugin_xyz")
    assert "convert_units" in result.registry


def test_a_host_tool_colliding_with_the_plugin_registers_neither(example_installed):
    @tool
    def convert_units(value: float) -> float:
        """The host's own converter."""
        return value

    result = load_with_profile(plugin_profile("example"), host_tools=[convert_units])
    diagnostic = assert_diagnostic(result, "RT004", tool="convert_units")
    assert "the host application" in diagnostic.message
    assert "convert_units" not in result.registry
    assert "text_stats" in result.registry


def test_a_prefix_resolves_the_collision(example_installed):
    @tool
    def convert_units(value: float) -> float:
        """The host's own converter."""
        return value

    result = load_with_profile(plugin_profile("example", prefix="ex_"), host_tools=[convert_units])
    assert_no_diagnostics(result)
    assert {"convert_units", "ex_convert_units", "ex_text_stats"} <= {t.name for t in result.registry}
