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
from reyn_core.loading.schema_cache import SchemaCheckCache
from reyn_core.registry.builder import CheckedDefinitions
from reyn_core.schema import check_tool_schema

# A provider-lint warning (RS101) the adopted registration must keep.
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": True}


def ping(q: str = "") -> str:
    """Echo."""
    return q


def make(name: str = "ping") -> ToolDefinition:
    return ToolDefinition(name=name, description="Echo.", parameters=dict(SCHEMA), handler=ping)


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, parameters: Any, *, phase_usable: bool, validator: Any = None) -> Any:
        self.calls += 1
        return check_tool_schema(parameters, phase_usable=phase_usable, validator=validator)


def test_a_definition_another_builder_returned_is_adopted_as_is():
    ledger, check = CheckedDefinitions(), Counting()
    scratch = RegistryBuilder(schema_check=check, checked=ledger)
    checked = scratch.register(make(), origin=ToolOrigin(kind="host"))
    real = RegistryBuilder(schema_check=check, checked=ledger)
    assert real.register(checked, origin=checked.origin) is checked
    assert check.calls == 1
    assert real.warnings("ping") == scratch.warnings("ping") != ()
    assert real.freeze().get("ping") is checked
    # the validator the scratch builder's check compiled is the one the snapshot validates with
    entry = scratch.freeze().registered("ping")
    assert entry.validator is not None and entry.validator.compiled
    assert real.freeze().prepared("ping").validator is entry.validator


def test_an_equal_copy_or_another_origin_is_checked_again():
    ledger, check = CheckedDefinitions(), Counting()
    checked = RegistryBuilder(schema_check=check, checked=ledger).register(make())
    copy = replace(checked)
    assert copy == checked and copy is not checked
    again = RegistryBuilder(schema_check=check, checked=ledger).register(copy)
    assert again is not copy and again.parameters is not copy.parameters  # a private copy
    assert check.calls == 2
    plugin = ToolOrigin(kind="plugin", plugin_id="p")
    restamped = RegistryBuilder(schema_check=check, checked=ledger).register(checked, origin=plugin)
    assert restamped.origin == plugin and check.calls == 3


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


def test_a_builder_without_a_ledger_checks_every_time():
    check = Counting()
    builder = RegistryBuilder(schema_check=check)
    checked = builder.register(make())
    RegistryBuilder(schema_check=check).register(checked)
    assert check.calls == 2


def test_a_load_checks_each_tool_once(monkeypatch):
    calls: list[str] = []
    original = SchemaCheckCache.__call__

    def counting(
        self: SchemaCheckCache, parameters: Any, *, phase_usable: bool, validator: Any = None
    ) -> Any:
        calls.append(repr(parameters))
        return original(self, parameters, phase_usable=phase_usable, validator=validator)

    monkeypatch.setattr(SchemaCheckCache, "__call__", counting)
    cache = SchemaCheckCache(None)
    host = reyn_core.tool(ping)
    result = load(
        Profile.from_toml_text('[plugins]\nenable = ["example"]\n'), host_tools=[host], schema_cache=cache
    )
    names = [t.name for t in result.registry.tools()]
    assert "ping" in names
    assert len(names) >= 2, names  # the host tool and the example plugin's tools
    assert len(calls) == len(names)
    assert len(cache.checked) == 0  # the ledger is emptied once the registry is built
    rendered = render_router(result.registry, ToolContext(surface="router"))
    assert {"convert_units", "text_stats"} <= {t["function"]["name"] for t in rendered}
