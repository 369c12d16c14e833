"""Each tool is checked once per load: the loader's scratch builders (a plugin's tools, each host tool)
and the real registry share a ledger of checked definitions, and the real registry adopts the very
objects the scratch builders checked instead of checking and copying them again (issue 15). Anything
else — another object, even an equal one, or another origin — is checked as before."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import reyn_core
from reyn_core import ToolContext, ToolDefinition, ToolOrigin, ToolRegistrationError
from reyn_core.host import Profile, RegistryBuilder, load, render_router
from reyn_core.registry import checks as registry_checks
from reyn_core.registry.builder import CheckedDefinitions
from reyn_core.schema import check_tool_schema

# A provider-lint warning (RS101) the adopted registration must keep.
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": True}


def ping(q: str = "") -> str:
    """Echo."""
    return q


def make(name: str = "ping") -> ToolDefinition:
    return ToolDefinition(name=name, description="Echo.", parameters=dict(SCHEMA), handler=ping)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The schemas the builders check, in order: the real ``check_tool_schema``, counted."""
    calls: list[Any] = []

    def counting(parameters: Any, **kwargs: Any) -> Any:
        calls.append(parameters)
        return check_tool_schema(parameters, **kwargs)

    monkeypatch.setattr(registry_checks, "check_tool_schema", counting)
    return calls


def test_a_definition_another_builder_returned_is_adopted_as_is(checks: list[Any]):
    ledger = CheckedDefinitions()
    scratch = RegistryBuilder(checked=ledger)
    checked = scratch.register(make(), origin=ToolOrigin(kind="host"))
    real = RegistryBuilder(checked=ledger)
    assert real.register(checked, origin=checked.origin) is checked
    assert len(checks) == 1
    assert real.warnings("ping") == scratch.warnings("ping") != ()
    assert real.freeze().get("ping") is checked
    # the validator the scratch builder's check compiled is the one the snapshot validates with
    entry = scratch.freeze().registered("ping")
    assert entry.validator is not None and entry.validator.compiled
    assert real.freeze().prepared("ping").validator is entry.validator


def test_an_equal_copy_or_another_origin_is_checked_again(checks: list[Any]):
    ledger = CheckedDefinitions()
    checked = RegistryBuilder(checked=ledger).register(make())
    copy = replace(checked)
    assert copy == checked and copy is not checked
    again = RegistryBuilder(checked=ledger).register(copy)
    assert again is not copy and again.parameters is not copy.parameters  # a private copy
    assert len(checks) == 2
    plugin = ToolOrigin(kind="plugin", plugin_id="p")
    restamped = RegistryBuilder(checked=ledger).register(checked, origin=plugin)
    assert restamped.origin == plugin and len(checks) == 3


def test_a_refused_definition_is_never_adopted():
    ledger = CheckedDefinitions()
    bad = ToolDefinition(name="bad", description="x", parameters={"type": "nonsense"}, handler=ping)
    with pytest.raises(ToolRegistrationError):
        RegistryBuilder(checked=ledger).register(bad)
    assert len(ledger) == 0
    with pytest.raises(ToolRegistrationError):
        RegistryBuilder(checked=ledger).register(bad)


def test_a_collision_in_the_real_builder_is_still_refused():
    ledger = CheckedDefinitions()
    a = RegistryBuilder(checked=ledger).register(make("Ping"))
    b = RegistryBuilder(checked=ledger).register(make("ping"))
    real = RegistryBuilder(checked=ledger)
    real.register(a)
    with pytest.raises(ToolRegistrationError) as info:
        real.register(b)
    assert info.value.code == "RT004"


def test_a_builder_without_a_ledger_checks_every_time(checks: list[Any]):
    checked = RegistryBuilder().register(make())
    RegistryBuilder().register(checked)
    assert len(checks) == 2


def test_a_load_checks_each_tool_once_and_every_load_checks_again(checks: list[Any]):
    host = reyn_core.tool(ping)
    profile = Profile.from_toml_text('[plugins]\nenable = ["example"]\n')
    result = load(profile, host_tools=[host])
    names = [t.name for t in result.registry.tools()]
    assert "ping" in names
    assert len(names) >= 2, names  # the host tool and the example plugin's tools
    assert len(checks) == len(names)
    # the next load checks every tool again: nothing stored answers for a check
    assert len(load(profile, host_tools=[host]).registry) == len(names)
    assert len(checks) == 2 * len(names)
    rendered = render_router(result.registry, ToolContext(surface="router"))
    assert {"convert_units", "text_stats"} <= {t["function"]["name"] for t in rendered}
