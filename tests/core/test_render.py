"""Both renderers: golden bytes, order independence, enrichers on copies, provider-valid output,
phase output schema that accepts valid outputs and rejects disallowed ops, strict mode."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from openai.types.chat import ChatCompletionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

from reyn_core import ToolContext, ToolDefinition, ToolGates
from reyn_core.host import RegistryBuilder, render_phase, render_router
from reyn_core.jsondata import compact_json
from reyn_core.render import StrictRenderError, render_router_json

GOLDEN = Path(__file__).parent / "golden"
SKILLS = {"skills": ["summarise", "translate"]}
PHASE_OPS = ("file", "catalog", "web_*")


def router_ctx() -> ToolContext:
    return ToolContext(surface="router", agent="golden", extras=SKILLS)


def phase_ctx() -> ToolContext:
    return ToolContext(surface="phase", agent="golden", extras=SKILLS)


def golden(name: str, text: str) -> str:
    """The stored golden text; ``REYN_UPDATE_GOLDEN=1`` rewrites it from the current output."""
    path = GOLDEN / name
    if os.environ.get("REYN_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


def test_router_surface_matches_its_golden_bytes(catalogue: list[Any], build_registry: Any) -> None:
    text = render_router_json(build_registry(catalogue), router_ctx())
    assert text == golden("router.json", text)


def test_router_strict_surface_matches_its_golden_bytes(catalogue: list[Any], build_registry: Any) -> None:
    strictable = [d for d in catalogue if d.name != "invoke_skill"]  # its free-form `input` cannot be strict
    text = render_router_json(build_registry(strictable), router_ctx(), strict=True)
    assert text == golden("router_strict.json", text)


def test_phase_output_schema_matches_its_golden(catalogue: list[Any], build_registry: Any) -> None:
    text = compact_json(render_phase(build_registry(catalogue), phase_ctx(), PHASE_OPS).output_schema)
    assert text == golden("phase_output_schema.json", text)


def test_phase_prompt_text_matches_its_golden(catalogue: list[Any], build_registry: Any) -> None:
    text = render_phase(build_registry(catalogue), phase_ctx(), PHASE_OPS).prompt_text() + "\n"
    assert text == golden("phase_prompt.txt", text)


def test_output_is_the_same_bytes_whatever_the_registration_order(
    catalogue: list[Any], build_registry: Any
) -> None:
    seen: set[tuple[str, str, str]] = set()
    rng = random.Random(7)
    for _ in range(12):
        definitions = list(catalogue)
        rng.shuffle(definitions)
        registry = build_registry(definitions)
        phase = render_phase(registry, phase_ctx(), PHASE_OPS)
        seen.add(
            (
                render_router_json(registry, router_ctx()),
                compact_json(phase.output_schema),
                phase.prompt_text(),
            )
        )
    assert len(seen) == 1


def test_allowed_ops_order_does_not_change_the_phase_surface(
    catalogue: list[Any], build_registry: Any
) -> None:
    registry = build_registry(catalogue)
    a = render_phase(registry, phase_ctx(), ["file", "web_*", "catalog"])
    b = render_phase(registry, phase_ctx(), ["web_*", "catalog", "file", "file"])
    assert compact_json(a.output_schema) == compact_json(b.output_schema)


def test_enrichers_do_not_mutate_the_registry(catalogue: list[Any], build_registry: Any) -> None:
    registry = build_registry(catalogue)
    before = compact_json([dict(t.parameters) for t in registry])
    render_router(registry, router_ctx())
    render_phase(registry, phase_ctx(), PHASE_OPS)
    assert compact_json([dict(t.parameters) for t in registry]) == before
    assert "enum" not in registry.get("invoke_skill").parameters["properties"]["skill"]


def test_enrichment_of_one_session_does_not_leak_into_another(
    catalogue: list[Any], build_registry: Any
) -> None:
    registry = build_registry(catalogue)

    def skill_enum(ctx: ToolContext) -> Any:
        [tool] = [t for t in render_router(registry, ctx) if t["function"]["name"] == "invoke_skill"]
        return tool["function"]["parameters"]["properties"]["skill"]["enum"]

    assert skill_enum(ToolContext(extras={"skills": ["a"]})) == ["a"]
    assert skill_enum(ToolContext(extras={"skills": ["b", "c"]})) == ["b", "c"]


def test_mutating_the_rendered_array_does_not_touch_the_registry(
    catalogue: list[Any], build_registry: Any
) -> None:
    registry = build_registry(catalogue)
    for item in render_router(registry, router_ctx()):
        item["function"]["parameters"]["properties"].clear()
    assert registry.get("read_file").parameters["properties"]


def _scribble(node: Any) -> None:
    """Change every object and array of a rendered tree in place, all the way down."""
    if isinstance(node, dict):
        for value in node.values():
            _scribble(value)
        node["scribbled"] = True
    elif isinstance(node, list):
        for value in node:
            _scribble(value)
        node.append("scribbled")


class _Tags(list[str]):
    """A plugin's own list type: copied like any list, never shared."""


@pytest.mark.parametrize("target", ["openai", "openai-strict", "anthropic", "gemini", "mcp"])
def test_a_rendered_tree_shares_nothing_with_the_registry_or_an_enricher(target: str) -> None:
    # The renderer copies each schema once and adapts that copy: whatever a caller does to the
    # array it got, down to the deepest list, reaches neither the registry nor an enricher's own data.
    shared_enum = _Tags(["alpha", "beta"])

    def enrich(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {
            **params,
            "properties": {"pick": {"type": "string", "enum": shared_enum}},
            "required": ["pick"],
        }

    closed = {"type": "object", "additionalProperties": False}
    plain = ToolDefinition(
        name="plain",
        description="A plain tool.",
        parameters={
            **closed,
            "properties": {"tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}}},
            "required": ["tags"],
        },
        handler=lambda **kw: kw,
    )
    enriched = ToolDefinition(
        name="enriched",
        description="An enriched tool.",
        parameters=closed,
        handler=lambda **kw: kw,
        schema_enricher=enrich,
    )
    builder = RegistryBuilder()
    builder.register(plain)
    builder.register(enriched)
    registry = builder.freeze()
    first = render_router(registry, router_ctx(), target=target)
    pristine = compact_json(first)
    _scribble(first)
    assert compact_json(render_router(registry, router_ctx(), target=target)) == pristine
    assert shared_enum == ["alpha", "beta"]
    assert "scribbled" not in compact_json(dict(registry.get("plain").parameters))


def test_router_output_validates_against_the_openai_types(catalogue: list[Any], build_registry: Any) -> None:
    adapter = TypeAdapter(ChatCompletionToolParam)
    for strict in (False, True):
        tools = [d for d in catalogue if not strict or d.name != "invoke_skill"]
        for item in render_router(build_registry(tools), router_ctx(), strict=strict):
            adapter.validate_python(item)
            assert set(item) <= set(ChatCompletionToolParam.__annotations__)
            assert set(item["function"]) <= set(FunctionDefinition.__annotations__)


def test_every_rendered_parameters_schema_is_valid_json_schema(
    catalogue: list[Any], build_registry: Any
) -> None:
    for strict in (False, True):
        tools = [d for d in catalogue if not strict or d.name != "invoke_skill"]
        for item in render_router(build_registry(tools), router_ctx(), strict=strict):
            Draft202012Validator.check_schema(item["function"]["parameters"])


def test_both_surfaces_use_the_same_description(catalogue: list[Any], build_registry: Any) -> None:
    registry = build_registry(catalogue)
    router = {
        t["function"]["name"]: t["function"]["description"] for t in render_router(registry, router_ctx())
    }
    phase = {op.kind: op.description for op in render_phase(registry, phase_ctx(), PHASE_OPS).ops}
    assert all(router[name] == description for name, description in phase.items() if name in router)
    assert set(router) & set(phase) == {"invoke_skill", "read_file", "web_fetch", "write_file"}


def test_role_gates_split_the_surfaces(catalogue: list[Any], build_registry: Any) -> None:
    registry = build_registry(catalogue)
    router = {t["function"]["name"] for t in render_router(registry, router_ctx())}
    phase = {op.kind for op in render_phase(registry, phase_ctx(), PHASE_OPS).ops}
    assert "plan" in router - phase and "ask_user" in phase - router


def test_router_exclude_hides_a_tool(catalogue: list[Any], build_registry: Any) -> None:
    names = [
        t["function"]["name"]
        for t in render_router(build_registry(catalogue), router_ctx(), exclude=["plan"])
    ]
    assert "plan" not in names and "read_file" in names


# --------------------------------------------------------------------------- phase output schema

VALID_OUTPUT = {
    "control": {
        "type": "transition",
        "decision": "continue",
        "next_phase": "review",
        "confidence": 0.8,
        "reason": {"why": "draft written"},
    },
    "artifact": {"type": "draft", "data": {"text": "hello"}},
    "control_ir": [
        {"kind": "read_file", "path": "notes.md"},
        {"kind": "write_file", "path": "out/draft.md", "content": "hello", "mode": "overwrite"},
        {"kind": "invoke_skill", "skill": "summarise", "input": {"text": "x"}},
        {"kind": "ask_user", "question": "Ship it?", "choices": ["yes", "no"]},
    ],
}


def phase_validator(catalogue: list[Any], build_registry: Any, ops: Any = PHASE_OPS) -> Draft202012Validator:
    schema = render_phase(build_registry(catalogue), phase_ctx(), ops).output_schema
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_phase_output_schema_accepts_a_valid_output(catalogue: list[Any], build_registry: Any) -> None:
    assert list(phase_validator(catalogue, build_registry).iter_errors(VALID_OUTPUT)) == []


def test_phase_output_schema_rejects_an_op_that_is_not_allowed(
    catalogue: list[Any], build_registry: Any
) -> None:
    validator = phase_validator(catalogue, build_registry, ops=["file"])
    output = {**VALID_OUTPUT, "control_ir": [{"kind": "invoke_skill", "skill": "summarise"}]}
    assert not validator.is_valid(output)
    assert validator.is_valid({**VALID_OUTPUT, "control_ir": [{"kind": "read_file", "path": "a"}]})


def test_phase_output_schema_rejects_a_router_only_op(catalogue: list[Any], build_registry: Any) -> None:
    output = {**VALID_OUTPUT, "control_ir": [{"kind": "plan", "goal": "g", "steps": [{"tool": "x"}]}]}
    assert not phase_validator(catalogue, build_registry).is_valid(output)


def test_phase_output_schema_rejects_bad_op_arguments(catalogue: list[Any], build_registry: Any) -> None:
    validator = phase_validator(catalogue, build_registry)
    for op in (
        {"kind": "read_file"},
        {"kind": "read_file", "path": 3},
        {"kind": "read_file", "path": "a", "x": 1},
        {"kind": "invoke_skill", "skill": "not_a_skill"},
    ):
        assert not validator.is_valid({**VALID_OUTPUT, "control_ir": [op]}), op


def test_phase_output_schema_requires_control(catalogue: list[Any], build_registry: Any) -> None:
    assert not phase_validator(catalogue, build_registry).is_valid({"control_ir": []})


def test_phase_with_no_allowed_ops_accepts_only_an_empty_control_ir(
    catalogue: list[Any], build_registry: Any
) -> None:
    registry = build_registry(catalogue)
    surface = render_phase(registry, phase_ctx(), [])
    validator = Draft202012Validator(surface.output_schema)
    assert validator.is_valid({"control": VALID_OUTPUT["control"], "control_ir": []})
    assert not validator.is_valid(
        {"control": VALID_OUTPUT["control"], "control_ir": [{"kind": "read_file", "path": "a"}]}
    )
    assert "No ops are allowed" in surface.prompt_text()


def test_nested_defs_are_hoisted_with_a_per_op_prefix(catalogue: list[Any], build_registry: Any) -> None:
    [plan] = [d for d in catalogue if d.name == "plan"]
    plan_phase = dataclasses.replace(plan, name="plan_phase", gates=ToolGates(), cluster="planning")

    surface = render_phase(build_registry([plan_phase]), phase_ctx(), ["planning"])
    assert set(surface.output_schema["$defs"]) == {"plan_phase__Step"}
    validator = Draft202012Validator(surface.output_schema)
    op = {"kind": "plan_phase", "goal": "g", "steps": [{"tool": "read_file"}]}
    assert validator.is_valid({"control": VALID_OUTPUT["control"], "control_ir": [op]})
    assert not validator.is_valid(
        {"control": VALID_OUTPUT["control"], "control_ir": [{**op, "steps": [{"x": 1}]}]}
    )


# --------------------------------------------------------------------------- strict mode


def test_strict_makes_every_property_required_and_optional_ones_nullable(
    catalogue: list[Any], build_registry: Any
) -> None:
    [read] = [t for t in render_router(build_registry(catalogue[:1]), router_ctx(), strict=True)]
    params = read["function"]["parameters"]
    assert read["function"]["strict"] is True
    assert params["required"] == ["path", "max_bytes"] and params["additionalProperties"] is False
    assert params["properties"]["max_bytes"]["type"] == ["integer", "null"]
    assert "default" not in params["properties"]["max_bytes"]


def test_strict_closes_nested_objects_in_defs(catalogue: list[Any], build_registry: Any) -> None:
    [plan] = render_router(
        build_registry([d for d in catalogue if d.name == "plan"]), router_ctx(), strict=True
    )
    step = plan["function"]["parameters"]["$defs"]["Step"]
    assert step["additionalProperties"] is False and step["required"] == ["tool", "note"]


def test_strict_does_not_change_the_registry(catalogue: list[Any], build_registry: Any) -> None:
    registry = build_registry(catalogue[:1])
    render_router(registry, router_ctx(), strict=True)
    assert registry.get("read_file").parameters["required"] == ["path"]


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        (
            {
                "type": "object",
                "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
            },
            "allows additional properties",
        ),
        ({"type": "object", "properties": {"input": {"type": "object"}}}, "declares no properties"),
        ({"type": "object", "patternProperties": {"^x": {"type": "string"}}}, "'patternProperties'"),
        ({"type": "object", "properties": {"a": {"type": "string", "not": {"const": "x"}}}}, "'not'"),
    ],
)
def test_non_strictable_schema_raises_strict_render_error_naming_tool_and_reason(
    schema: dict[str, Any], reason: str, build_registry: Any, catalogue: list[Any]
) -> None:
    bad = ToolDefinition(
        name="loose", description="Loose schema.", parameters=schema, handler=lambda **kw: kw
    )
    with pytest.raises(StrictRenderError) as info:
        render_router(build_registry([bad, catalogue[0]]), router_ctx(), strict=True)
    [error] = info.value.errors
    assert error.tool == "loose" and reason in error.reason
    assert "'loose'" in str(info.value) and reason in str(info.value)
    rendered = {t["function"]["name"]: t["function"] for t in info.value.rendered}
    assert rendered["read_file"]["strict"] is True and "strict" not in rendered["loose"]


def test_rendering_an_empty_registry_gives_empty_surfaces() -> None:
    registry = RegistryBuilder().freeze()
    assert render_router(registry, router_ctx()) == []
    assert render_phase(registry, phase_ctx(), ["file"]).ops == ()
    assert json.loads(render_router_json(registry, router_ctx())) == []


@pytest.mark.parametrize(
    "enricher",
    [
        lambda schema, ctx: 1 / 0,
        lambda schema, ctx: ["not", "a", "schema"],
        lambda schema, ctx: {"type": "string"},
    ],
)
def test_a_broken_enricher_renders_the_registered_schema_and_spares_the_others(
    enricher: Any, catalogue: list[Any], build_registry: Any, caplog: pytest.LogCaptureFixture
) -> None:
    broken = dataclasses.replace(
        next(d for d in catalogue if d.name == "invoke_skill"), schema_enricher=enricher
    )
    registry = build_registry([broken, catalogue[0]])
    tools = {t["function"]["name"]: t["function"] for t in render_router(registry, router_ctx())}
    assert tools["invoke_skill"]["parameters"] == dict(registry.get("invoke_skill").parameters)
    assert set(tools) == {"invoke_skill", "read_file"}
    assert [op.kind for op in render_phase(registry, phase_ctx(), ["catalog"]).ops] == ["invoke_skill"]
    assert "schema_enricher of tool 'invoke_skill'" in caplog.text


def test_phase_output_schema_keeps_local_pointer_refs_resolvable() -> None:
    from reyn_core import ToolContext, ToolDefinition
    from reyn_core.host import RegistryBuilder, parse_phase_output, render_phase

    schema = {
        "type": "object",
        "$defs": {"unit": {"enum": ["m", "km"]}},
        "properties": {
            "a": {"type": "integer", "minimum": 0},
            "b": {"$ref": "#/properties/a"},  # a pointer into the tool's own root
            "u": {"$ref": "#/$defs/unit"},
        },
        "required": ["a"],
        "additionalProperties": False,
    }
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(
            name="measure", description="Measure.", parameters=schema, handler=lambda **kw: kw, cluster="m"
        )
    )
    surface = render_phase(builder.freeze(), ToolContext(surface="phase"), ["measure"])
    validator = Draft202012Validator(surface.output_schema)
    finish = {"type": "finish", "decision": "finish"}
    good = {"control": finish, "control_ir": [{"kind": "measure", "a": 1, "b": 2, "u": "km"}]}
    assert list(validator.iter_errors(good)) == []  # every $ref resolves inside the output schema
    bad = {"control": finish, "control_ir": [{"kind": "measure", "a": 1, "b": -2, "u": "mi"}]}
    assert not validator.is_valid(bad)
    assert parse_phase_output(good, surface).control_ir[0].args == {"a": 1, "b": 2, "u": "km"}
