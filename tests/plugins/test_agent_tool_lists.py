"""The load step that gathers agents' tool lists (``reyn_agent_tools``): a misbehaving hook warns
(``RI012``) and declares nothing, a bad entry is skipped and the rest kept, several plugins' lists of
one agent intersect, and the profile's ``[agents.<name>] tools`` replaces them. Real pluggy managers
with the plugin hooks registered, as the loader makes them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from reyn_core import hookimpl
from reyn_core.hookspecs import plugin_manager
from reyn_core.host import Profile
from reyn_core.loading.plugin_state import PluginState
from reyn_core.loading.step5_hooks.agent_tools import agent_tool_lists, collect_agent_tools


def plugin(pid: str, answer: Any) -> PluginState:
    @hookimpl
    def reyn_agent_tools(settings: Any) -> Any:
        if isinstance(answer, BaseException):
            raise answer
        return answer

    pm = plugin_manager()
    pm.register(SimpleNamespace(reyn_agent_tools=reyn_agent_tools), name=pid)
    state = PluginState(pid, pm=pm)
    collect_agent_tools(None, state)  # type: ignore[arg-type]  # the step reads no session state
    return state


def codes(state: PluginState) -> list[str]:
    return [d.code for d in state.diagnostics]


def test_a_plugins_lists_are_gathered():
    state = plugin("crew", {"scout": ["read_file"], "idle": []})
    assert state.agent_tools == {"scout": ("read_file",), "idle": ()} and codes(state) == []


def test_a_hook_that_raises_warns_and_declares_nothing_and_the_plugin_still_loads():
    state = plugin("crew", RuntimeError("agents folder unreadable"))
    assert state.agent_tools == {} and codes(state) == ["RI012"] and state.ok
    assert "agents folder unreadable" in state.diagnostics[0].message


def test_an_answer_that_is_not_a_mapping_warns():
    state = plugin("crew", ["scout"])
    assert state.agent_tools == {} and codes(state) == ["RI012"]


def test_a_bad_entry_is_skipped_and_the_others_kept():
    state = plugin("crew", {"scout": "read_file", "": ["x"], "ok": ["list_skills"], "bad": [1]})
    assert state.agent_tools == {"ok": ("list_skills",)}
    assert codes(state) == ["RI012", "RI012", "RI012"]


def test_lists_of_one_agent_from_two_plugins_intersect_and_the_profile_replaces_them():
    one = plugin("one", {"scout": ["read_file", "grep_files"]})
    two = plugin("two", {"scout": ["grep_files", "list_skills"], "solo": ["a"]})
    assert agent_tool_lists(Profile(), [one, two]) == {
        "scout": frozenset({"grep_files"}),
        "solo": frozenset({"a"}),
    }
    profile = Profile.from_toml_text('[agents.scout]\ntools = ["read_file"]\n[agents.new]\ntools = []\n')
    assert agent_tool_lists(profile, [one, two]) == {
        "new": frozenset(),
        "scout": frozenset({"read_file"}),
        "solo": frozenset({"a"}),
    }


def test_a_refused_plugins_lists_are_not_used():
    refused = plugin("gone", {"scout": ["read_file"]})
    refused.status = "refused"
    assert agent_tool_lists(Profile(), [refused]) == {}


def test_an_agents_table_is_strict():
    import pytest

    from reyn_core.host import ProfileError

    with pytest.raises(ProfileError, match=r"agents\.scout\.tool"):
        Profile.from_toml_text('[agents.scout]\ntool = ["read_file"]\n')
