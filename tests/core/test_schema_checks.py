"""Registration-time schema checks: each bad schema is refused with its own code, lints only warn."""

from __future__ import annotations

import pytest

from reyn_core import ToolDefinition, ToolGates, ToolRegistrationError, ToolRegistry
from reyn_core.schema import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, check_tool_schema


def register(parameters: object, gates: ToolGates = ToolGates()) -> ToolRegistrationError:
    d = ToolDefinition(name="t", description="A tool.", parameters=parameters, handler=lambda: 1,  # type: ignore[arg-type]
                       gates=gates)
    builder = ToolRegistry()
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(d)
    assert len(builder) == 0
    return info.value


def test_non_mapping_schema_is_rs001() -> None:
    assert register([]).code == "RS001"


def test_non_json_serialisable_schema_is_rs001() -> None:
    assert register({"type": "object", "default": object()}).code == "RS001"


def test_oversized_schema_is_rs002() -> None:
    big = {"type": "object", "description": "x" * (MAX_SCHEMA_BYTES + 1)}
    assert register(big).code == "RS002"


def test_too_deep_schema_is_rs002() -> None:
    node: dict[str, object] = {"type": "string"}
    for _ in range(MAX_SCHEMA_DEPTH):
        node = {"type": "object", "properties": {"a": node}}
    error = register(node)
    assert error.code == "RS002" and "levels" in error.message


def test_non_object_root_is_rs003() -> None:
    assert register({"type": "string"}).code == "RS003"


@pytest.mark.parametrize("ref", ["http://example.com/s.json", "file:///etc/passwd", "other.json#/x", "//host/x"])
def test_non_local_ref_is_rs004(ref: str) -> None:
    error = register({"type": "object", "properties": {"a": {"$ref": ref}}})
    assert error.code == "RS004" and "not local" in error.message


def test_dangling_local_ref_is_rs004() -> None:
    error = register({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert error.code == "RS004" and "points at nothing" in error.message


def test_local_refs_to_defs_pointers_and_anchors_are_accepted() -> None:
    schema = {"type": "object", "$defs": {"s": {"type": "string", "$anchor": "str"}},
              "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#str"}}}
    assert not [i for i in check_tool_schema(schema, phase_usable=True) if i.severity == "error"]


def test_dynamic_ref_is_rs004() -> None:
    assert register({"type": "object", "properties": {"a": {"$dynamicRef": "#x"}}}).code == "RS004"


def test_embedded_id_is_rs004() -> None:
    assert register({"type": "object", "properties": {"a": {"$id": "http://x/y", "type": "string"}}}).code == "RS004"


def test_invalid_json_schema_is_rs005_with_pointer() -> None:
    error = register({"type": "object", "properties": {"a": {"type": "strng"}}})
    assert error.code == "RS005" and "/properties/a/type" in error.message


def test_kind_parameter_on_a_phase_usable_tool_is_rs006() -> None:
    error = register({"type": "object", "properties": {"kind": {"type": "string"}}})
    assert error.code == "RS006" and "rename it or deny the phase gate" in error.message


def test_kind_parameter_is_fine_for_a_router_only_tool() -> None:
    d = ToolDefinition(name="t", description="A tool.", handler=lambda kind: kind, gates=ToolGates(phase="deny"),
                       parameters={"type": "object", "properties": {"kind": {"type": "string"}}})
    assert ToolRegistry().register(d).name == "t"


@pytest.mark.parametrize("pattern", ["(a+)+$", "(", "x" * 1001])
def test_dangerous_or_broken_pattern_is_rs007(pattern: str) -> None:
    assert register({"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}).code == "RS007"


def test_provider_lints_are_warnings_and_the_tool_registers() -> None:
    d = ToolDefinition(name="t", description="A tool.", handler=lambda **kw: kw,
                       parameters={"type": "object", "properties": {"a": {"type": "string"}},
                                   "patternProperties": {"^x": {"type": "integer"}}})
    builder = ToolRegistry()
    builder.register(d)
    codes = {w.code for w in builder.warnings("t")}
    assert codes == {"RS101", "RS102"}


def test_a_refused_tool_does_not_stop_the_next_registration() -> None:
    builder = ToolRegistry()
    with pytest.raises(ToolRegistrationError):
        builder.register(ToolDefinition(name="bad", description="x", parameters={"type": "string"}, handler=len))
    builder.register(ToolDefinition(name="good", description="x", parameters={"type": "object"}, handler=len))
    assert [t.name for t in builder] == ["good"]


def test_registry_keeps_its_own_copy_of_the_schema() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"a": {"type": "string"}}}
    builder = ToolRegistry()
    registered = builder.register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    schema["properties"] = {"a": {"$ref": "http://127.0.0.1:1/x"}}  # the plugin mutates its dict later
    assert registered.parameters["properties"] == {"a": {"type": "string"}}
    assert builder.get("t").parameters == registered.parameters


@pytest.mark.parametrize(("field", "value", "says"), [
    ("purity", "readonly", "purity 'readonly'"),
    ("dispatch_kind", "later", "dispatch_kind 'later'"),
    ("gates", ToolGates(router="Allow"), "gates must be"),  # type: ignore[arg-type]
    ("gates", {"router": "allow"}, "gates must be"),
    ("cluster", "", "cluster must be"),
    ("timeout_s", 0, "timeout_s must be"),
    ("timeout_s", -1.5, "timeout_s must be"),
    ("timeout_s", float("nan"), "timeout_s must be"),
    ("timeout_s", "5", "timeout_s must be"),
    ("available", True, "available must be callable"),
    ("schema_enricher", "x", "schema_enricher must be callable"),
])
def test_invalid_definition_field_is_rt006(field: str, value: object, says: str) -> None:
    d = ToolDefinition(name="t", description="A tool.", parameters={"type": "object"}, handler=len,
                       **{field: value})  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError) as info:
        ToolRegistry().register(d)
    assert info.value.code == "RT006" and says in info.value.message
