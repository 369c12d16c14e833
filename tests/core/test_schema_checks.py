"""Registration-time schema checks: each bad schema is refused with its own code, lints only warn."""

from __future__ import annotations

import pytest

from reyn_core import ToolDefinition, ToolGates, ToolRegistrationError
from reyn_core.host import RegistryBuilder
from reyn_core.schema import MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, check_tool_schema


def register(parameters: object, gates: ToolGates = ToolGates()) -> ToolRegistrationError:
    d = ToolDefinition(
        name="t",
        description="A tool.",
        parameters=parameters,
        handler=lambda: 1,  # type: ignore[arg-type]
        gates=gates,
    )
    builder = RegistryBuilder()
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


@pytest.mark.parametrize(
    "ref", ["http://example.com/s.json", "file:///etc/passwd", "other.json#/x", "//host/x"]
)
def test_non_local_ref_is_rs004(ref: str) -> None:
    error = register({"type": "object", "properties": {"a": {"$ref": ref}}})
    assert error.code == "RS004" and "not local" in error.message


def test_dangling_local_ref_is_rs004() -> None:
    error = register({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}})
    assert error.code == "RS004" and "points at nothing" in error.message


def test_local_refs_to_defs_and_json_pointers_are_accepted() -> None:
    schema = {
        "type": "object",
        "$defs": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/properties/a"}},
    }
    assert not [i for i in check_tool_schema(schema, phase_usable=True) if i.severity == "error"]


def test_dynamic_ref_is_rs004() -> None:
    assert register({"type": "object", "properties": {"a": {"$dynamicRef": "#x"}}}).code == "RS004"


def test_embedded_id_is_rs004() -> None:
    assert (
        register({"type": "object", "properties": {"a": {"$id": "http://x/y", "type": "string"}}}).code
        == "RS004"
    )


def test_invalid_json_schema_is_rs005_with_pointer() -> None:
    error = register({"type": "object", "properties": {"a": {"type": "strng"}}})
    assert error.code == "RS005" and "/properties/a/type" in error.message


def test_kind_parameter_on_a_phase_usable_tool_is_rs006() -> None:
    error = register({"type": "object", "properties": {"kind": {"type": "string"}}})
    assert error.code == "RS006" and "rename it or deny the phase gate" in error.message


def test_kind_parameter_is_fine_for_a_router_only_tool() -> None:
    d = ToolDefinition(
        name="t",
        description="A tool.",
        handler=lambda kind: kind,
        gates=ToolGates(phase="deny"),
        parameters={"type": "object", "properties": {"kind": {"type": "string"}}},
    )
    assert RegistryBuilder().register(d).name == "t"


# '(a+)+$' is no longer refused: patterns run on RE2, in linear time (tests/core/test_schema_patterns.py).
@pytest.mark.parametrize("pattern", ["(a)\\1", "(?=a)", "(", "x" * 1001])
def test_dangerous_or_broken_pattern_is_rs007(pattern: str) -> None:
    assert (
        register({"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}).code
        == "RS007"
    )


def test_provider_lints_are_warnings_and_the_tool_registers() -> None:
    d = ToolDefinition(
        name="t",
        description="A tool.",
        handler=lambda **kw: kw,
        parameters={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x": {"type": "integer"}},
        },
    )
    builder = RegistryBuilder()
    builder.register(d)
    codes = {w.code for w in builder.warnings("t")}
    assert codes == {"RS101", "RS102"}


def test_a_refused_tool_does_not_stop_the_next_registration() -> None:
    builder = RegistryBuilder()
    with pytest.raises(ToolRegistrationError):
        builder.register(
            ToolDefinition(name="bad", description="x", parameters={"type": "string"}, handler=len)
        )
    builder.register(ToolDefinition(name="good", description="x", parameters={"type": "object"}, handler=len))
    assert [t.name for t in builder.freeze()] == ["good"]


def test_registry_keeps_its_own_copy_of_the_schema() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"a": {"type": "string"}}}
    builder = RegistryBuilder()
    registered = builder.register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    schema["properties"] = {"a": {"$ref": "http://127.0.0.1:1/x"}}  # the plugin mutates its dict later
    assert registered.parameters["properties"] == {"a": {"type": "string"}}
    assert builder.freeze().get("t").parameters == registered.parameters


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
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
    ],
)
def test_invalid_definition_field_is_rt006(field: str, value: object, says: str) -> None:
    d = ToolDefinition(
        name="t", description="A tool.", parameters={"type": "object"}, handler=len, **{field: value}
    )  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(d)
    assert info.value.code == "RT006" and says in info.value.message


def _nested(levels: int) -> dict:
    root: dict = {"type": "object", "properties": {}}
    node = root
    for _ in range(levels):
        child: dict = {"type": "object", "properties": {}}
        node["properties"]["x"] = child
        node = child
    return root


def test_a_schema_nested_thousands_of_levels_is_RS002_not_a_recursion_error() -> None:
    [issue] = check_tool_schema(_nested(5000), phase_usable=True)
    assert (issue.code, issue.severity) == ("RS002", "error")


def test_a_schema_that_contains_itself_is_RS002() -> None:
    cyclic: dict = {"type": "object", "properties": {}}
    cyclic["properties"]["self"] = cyclic
    assert [i.code for i in check_tool_schema(cyclic, phase_usable=True)] == ["RS002"]


def test_anchor_references_are_refused_only_json_pointers_allowed() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#thing"}}, "$defs": {"t": {"$anchor": "thing"}}}
    issues = [i for i in check_tool_schema(schema, phase_usable=True) if i.code == "RS004"]
    assert issues and "anchor" in issues[0].message and issues[0].pointer == "/properties/a/$ref"


def test_pattern_properties_keys_get_the_same_regex_checks_as_pattern() -> None:
    issues = check_tool_schema(
        {"type": "object", "patternProperties": {"(?<=a)b": {"type": "string"}}}, phase_usable=True
    )
    assert [(i.code, i.pointer) for i in issues if i.severity == "error"] == [
        ("RS007", "/patternProperties/(?<=a)b")
    ]


def test_loading_with_a_deeply_nested_host_tool_reports_it_and_keeps_the_rest(tmp_path, monkeypatch) -> None:
    from reyn_core import ToolDefinition, tool
    from reyn_core.host import Profile, load

    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path))

    @tool
    def fine() -> str:
        """A fine host tool."""
        return "ok"

    deep = ToolDefinition(name="deep", description="Too deep.", parameters=_nested(3000), handler=lambda: 1)
    result = load(Profile.from_toml_text(""), host_tools=[deep, fine])
    assert "fine" in result.registry and "deep" not in result.registry
    assert [d.code for d in result.report.diagnostics if d.tool == "deep"] == ["RS002"]


# --------------------------------------------------------------------------- the meta-schema at compile
# A schema with no other error is compiled first, and the meta-schema check runs only to word a refused
# compile: that is sound only while the library refuses to compile every schema its meta-schema
# refuses. These hold it, over broken schemas of every keyword, for the library version installed.

_BROKEN_VALUES = (5, "x", -1, 1.5, None, True, [], {}, [1, 1], ["a", "a"], {"a": 5}, [{"a": 5}], "strin")
_KEYWORDS = (
    *("type", "properties", "required", "items", "prefixItems", "enum", "const", "minLength", "maxItems"),
    *("minimum", "multipleOf", "uniqueItems", "additionalProperties", "anyOf", "oneOf", "allOf", "not"),
    *("if", "then", "contains", "dependentRequired", "dependentSchemas", "propertyNames", "$defs"),
    *("patternProperties", "unevaluatedProperties", "minProperties", "format", "title", "default"),
)


@pytest.mark.parametrize("keyword", _KEYWORDS)
@pytest.mark.parametrize("where", ["root", "property", "item"])
def test_a_schema_the_meta_schema_refuses_never_compiles(keyword: str, where: str) -> None:
    import jsonschema_rs

    from reyn_core.validation.compiled import SchemaNotCompiled, _compile

    refused = 0
    for value in _BROKEN_VALUES:
        node: dict[str, object] = {keyword: value}
        schema: dict[str, object] = {"type": "object"}
        if where == "root":
            schema.update(node)
        elif where == "property":
            schema["properties"] = {"a": node}
        else:
            schema["properties"] = {"a": {"type": "array", "items": node}}
        if jsonschema_rs.meta.is_valid(schema):
            continue
        refused += 1
        with pytest.raises(SchemaNotCompiled):
            _compile(schema)
        # and the check reports the meta-schema's problem, worded by it, not the compile's
        meta = [i for i in check_tool_schema(schema, phase_usable=False) if i.code == "RS005"]
        assert len(meta) == 1 and meta[0].message.startswith("not a valid JSON Schema 2020-12"), meta
    assert refused or keyword in ("default", "const")  # any value is a valid default or const


@pytest.mark.parametrize("properties", [{1: {}}, {1: {}, "a": {}}], ids=["int key", "int and str keys"])
def test_a_schema_that_passes_the_meta_schema_but_does_not_compile_is_rs005_with_the_compile_reason(
    properties: dict[object, object],
) -> None:
    issues = check_tool_schema({"type": "object", "properties": properties}, phase_usable=False)
    assert [i.code for i in issues] == ["RS005"]
    assert "cannot be compiled" in issues[0].message
    assert register({"type": "object", "properties": properties}).code == "RS005"
    assert check_tool_schema({"type": "object", "properties": {"a": {}}}, phase_usable=False) == []
