"""A raw-schema tool's schema is compiled once: the validator the registration check compiles is the
one its snapshot entry validates with (issue 23)."""

from __future__ import annotations

import asyncio
from typing import Any

from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder
from reyn_core.registry.builder import CheckedDefinitions

SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}, "n": {"type": "integer"}},
    "required": ["q"],
    "additionalProperties": False,
}


def echo(q: str, n: int = 1) -> str:
    return q * n


def raw_tool(name: str = "echo") -> ToolDefinition:
    return ToolDefinition(name=name, description="Echo.", parameters=dict(SCHEMA), handler=echo)


def call(registry: Any, name: str, args: Any) -> dict[str, Any]:
    from reyn_core.host import dispatch_tool

    return asyncio.run(dispatch_tool(registry, name, args, ToolContext(surface="router")))


def test_the_validator_the_check_compiled_is_the_snapshots():
    builder = RegistryBuilder()
    builder.register(raw_tool())
    registry = builder.freeze()
    entry = registry.registered("echo")
    assert entry.validator is not None and entry.validator.compiled  # compiled by the check
    assert entry.validator.source is entry.definition.parameters  # for the registry's own copy
    prepared = registry.prepared("echo")
    assert call(registry, "echo", {"q": "ab", "n": 2}) == {"status": "ok", "data": "abab"}
    assert prepared.validator is entry.validator  # no second validator, no second compile
    refused = call(registry, "echo", {"q": "AB"})
    assert refused["error"]["kind"] == "invalid_arguments"
    assert prepared.validator is entry.validator


def test_a_derived_registry_keeps_the_compiled_validators():
    builder = RegistryBuilder()
    builder.register(raw_tool())
    registry = builder.freeze()
    # A registry derived from a snapshot adopts its checked definitions (as the loader's real builder
    # adopts its scratch builders') instead of compiling again.
    checked = CheckedDefinitions()
    checked.record(registry.registered("echo"))
    again = RegistryBuilder(checked=checked)
    again.register(registry.get("echo"))
    derived = again.freeze()
    assert derived.registered("echo").validator is registry.registered("echo").validator


def test_a_schema_the_library_refuses_is_refused_at_registration_and_the_rest_registers():
    import pytest

    from reyn_core.errors import ToolRegistrationError

    builder = RegistryBuilder()
    bad = ToolDefinition(
        name="bad",
        description="x",
        parameters={"type": "object", "properties": {"q": {"type": "string", "pattern": "a{1000}{1000}"}}},
        handler=echo,
    )
    with pytest.raises(ToolRegistrationError) as refused:
        builder.register(bad)
    assert refused.value.code in {"RS005", "RS007"}
    builder.register(raw_tool())
    assert call(builder.freeze(), "echo", {"q": "ok"})["status"] == "ok"
