"""``registry_from_plugin``: a plugin module that is not installed, run through its own hooks."""

from __future__ import annotations

import pytest

from reyn_core import ToolRegistrationError
from reyn_testing import ToolCaller, registry_from_plugin
from reyn_testing.modules import PluginModuleError

GOOD = '''
from pydantic import BaseModel, ConfigDict
from reyn_core import ToolContext, ToolGates, hookimpl, tool

REYN_API = 1

class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suffix: str = "!"

@tool(cluster="shout", purity="read_only")
def shout(text: str, ctx: ToolContext) -> str:
    """Upper-case a text."""
    return text.upper() + ctx.settings.suffix

@tool(cluster="shout", purity="read_only", gates=ToolGates(router="deny"))
def whisper(text: str) -> str:
    """Lower-case a text (phase only)."""
    return text.lower()

@hookimpl
def reyn_settings_model():
    return Settings

@hookimpl
def reyn_register_tools(register, settings):
    register(shout)
    register(whisper)
'''


def test_tools_are_registered_with_a_plugin_origin(plugin_module):
    registry = registry_from_plugin(plugin_module(GOOD), plugin_id="shouty")
    assert registry.frozen
    assert [t.name for t in registry] == ["shout", "whisper"]
    origin = registry.get("shout").origin
    assert (origin.kind, origin.plugin_id, origin.api_version) == ("plugin", "shouty", 1)


def test_settings_are_validated_and_reach_the_handler(plugin_module):
    registry = registry_from_plugin(plugin_module(GOOD), settings={"suffix": "?!"})
    assert ToolCaller(registry).router("shout", {"text": "hi"}).unwrap() == "HI?!"


def test_default_settings_apply_without_a_table(plugin_module):
    registry = registry_from_plugin(plugin_module(GOOD))
    assert ToolCaller(registry).router("shout", {"text": "hi"}).unwrap() == "HI!"


def test_an_unknown_settings_key_is_an_error_naming_it(plugin_module):
    with pytest.raises(PluginModuleError, match="sufix"):
        registry_from_plugin(plugin_module(GOOD), settings={"sufix": "?"})


def test_a_module_without_reyn_api_is_refused(plugin_module):
    source = GOOD.replace("REYN_API = 1", "")
    with pytest.raises(PluginModuleError, match=r"does not declare REYN_API.*add `REYN_API = 1`") as info:
        registry_from_plugin(plugin_module(source))
    assert info.value.code == "RI002"  # the loader's code and words (reyn_core.host.plugin_from_module)


def test_a_future_api_version_is_refused(plugin_module):
    with pytest.raises(PluginModuleError, match="REYN_API = 2"):
        registry_from_plugin(plugin_module(GOOD.replace("REYN_API = 1", "REYN_API = 2")))


def test_settings_for_a_plugin_without_a_settings_model_are_refused(plugin_module):
    source = GOOD.replace("@hookimpl\ndef reyn_settings_model():\n    return Settings\n", "")
    source = source.replace("ctx.settings.suffix", '"!"')
    with pytest.raises(PluginModuleError, match="takes no settings"):
        registry_from_plugin(plugin_module(source), settings={"suffix": "?"})


def test_a_name_claimed_twice_raises_the_collision_code(plugin_module):
    source = GOOD.replace("    register(whisper)\n", "    register(whisper)\n    register(shout)\n")
    with pytest.raises(ToolRegistrationError) as info:
        registry_from_plugin(plugin_module(source))
    assert info.value.code == "RT004"


def test_a_host_tool_with_the_same_name_collides(plugin_module):
    from reyn_core import tool

    @tool
    def shout(text: str) -> str:
        """Host version."""
        return text

    with pytest.raises(ToolRegistrationError, match="claimed by the host application and by plugin 'plugin'"):
        registry_from_plugin(plugin_module(GOOD), host_tools=[shout])


def test_a_dotted_module_name_is_imported(tmp_path, monkeypatch):
    (tmp_path / "my_reyn_plugin_mod.py").write_text(GOOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = registry_from_plugin("my_reyn_plugin_mod")
    assert "shout" in registry


def test_surfaces_narrowing_applies_the_operator_gate(plugin_module):
    registry = registry_from_plugin(plugin_module(GOOD), plugin_id="shouty", surfaces=["phase"])
    result = ToolCaller(registry).router("shout", {"text": "x"})
    assert result.error_kind == "gate_refused"
    assert result["error"]["layer"] == "operator"


def test_policy_hooks_of_the_plugin_run_around_calls(plugin_module):
    source = (
        GOOD
        + """
seen = []

@hookimpl
def reyn_before_tool_call(call):
    if call.arguments.get("text") == "forbidden":
        return "this text is not allowed"
    return None

@hookimpl
def reyn_after_tool_call(call, outcome):
    seen.append((call.tool.name, outcome.status))
"""
    )
    module = plugin_module(source)
    caller = ToolCaller(registry_from_plugin(module))
    denied = caller.router("shout", {"text": "forbidden"})
    assert denied.error_kind == "denied"
    assert "this text is not allowed" in denied.error_message
    assert caller.router("shout", {"text": "ok"}).ok
    assert module.seen == [("shout", "error"), ("shout", "ok")]


def test_a_policy_hook_that_raises_denies_the_call(plugin_module):
    source = (
        GOOD
        + """
@hookimpl
def reyn_before_tool_call(call):
    raise KeyError("policy table missing")
"""
    )
    result = ToolCaller(registry_from_plugin(plugin_module(source))).router("shout", {"text": "x"})
    assert result.error_kind == "denied"
    assert "policy hook of plugin 'plugin' failed" in result.error_message


def test_reyn_api_true_is_not_version_one(plugin_module):
    with pytest.raises(PluginModuleError, match="REYN_API = True"):
        registry_from_plugin(plugin_module(GOOD.replace("REYN_API = 1", "REYN_API = True")))


def test_a_misspelt_hook_is_refused(plugin_module):
    source = (
        GOOD
        + """
@hookimpl
def reyn_register_tool(register, settings):
    pass
"""
    )
    with pytest.raises(PluginModuleError, match=r"invalid hook implementation.*reyn_register_tool"):
        registry_from_plugin(plugin_module(source))


def test_what_the_loader_warns_about_is_a_warning_a_test_sees(plugin_module):
    # the loader's RC008 (a key a settings model that ignores extras dropped) and RI011 (a retired hook)
    source = GOOD.replace('extra="forbid"', 'extra="ignore"') + (
        "\n@hookimpl\ndef reyn_load_inputs(settings):\n    raise RuntimeError('never called')\n"
    )
    with pytest.warns(UserWarning, match=r"RC008: .*suffx: unknown setting, ignored; did you mean 'suffix'"):
        with pytest.warns(DeprecationWarning, match=r"RI011: .*reyn_load_inputs\(\), a retired hook"):
            registry = registry_from_plugin(plugin_module(source), settings={"suffx": "?"})
    assert ToolCaller(registry).router("shout", {"text": "hi"}).unwrap() == "HI!"  # still loads


def test_a_hook_that_raises_is_the_loaders_ri005(plugin_module):
    source = GOOD.replace("    register(shout)\n", "    raise KeyError('no table')\n")
    with pytest.raises(PluginModuleError, match=r"RI005: hook reyn_register_tools raised KeyError") as info:
        registry_from_plugin(plugin_module(source))
    assert info.value.code == "RI005"
    registry_from_plugin(plugin_module(GOOD))  # positive control: the same module without the raise loads


def test_a_plugin_module_runs_no_handler_outside_a_registry(plugin_module):
    """The host API offers one way to call a tool: a registry's dispatcher (gates, approvals, hooks,
    audit, bounds). A ``PluginModule`` (``plugin_from_module``, what the kit builds on) runs none."""
    from reyn_core.host import PluginModule, plugin_from_module

    plugin = plugin_from_module(plugin_module(GOOD), "plugin")
    plugin.register_tools()
    assert type(plugin) is PluginModule and "whisper" in plugin.tools
    for name in ("call", "run_decided_call", "run_handler"):
        assert not hasattr(plugin, name), name
    caller = ToolCaller(registry_from_plugin(plugin_module(GOOD)))
    assert not caller.router("whisper", {"text": "HI"}).ok  # the router gate denies it
    assert caller.phase("whisper", {"text": "HI"}).unwrap() == "hi"  # the control: where it is allowed
