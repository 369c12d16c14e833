"""Render targets: one registry rendered for ``openai``, ``anthropic``, ``gemini``, ``openai-strict``
and ``mcp``, each against its golden file (``REYN_UPDATE_GOLDEN=1`` rewrites them); what each target
adapts, what it cannot (and only that is warned about, RS101 / RS102), and which target a model's
provider gets."""

from __future__ import annotations

import enum
import json
import os
from pathlib import Path
from typing import Any, Literal, Optional

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDefinition, tool
from reyn_core.host import TARGETS, RegistryBuilder, adapt_parameters, render_router, target_for_model
from reyn_core.jsondata import compact_json
from reyn_core.schema import check_tool_schema

GOLDEN = Path(__file__).parent / "golden" / "targets"


class Finish(enum.Enum):
    matte = "matte"
    gloss = "gloss"


class Branch(BaseModel):
    name: str
    children: list[Branch] = []


@tool(purity="read_only")
def paint_wall(
    finish: Finish,
    mode: Literal["fast"],
    note: Optional[str] = None,
    coats: int | str = 2,
) -> str:
    """Paint a wall: a pydantic Enum ($ref), a const, an optional string and a union."""
    return "ok"


@tool(purity="read_only")
def grow_tree(root: Branch, labels: dict[str, int]) -> int:
    """Grow a tree: a recursive model and a map (neither fits Gemini's subset)."""
    return 1


HAND_WRITTEN = ToolDefinition(
    name="hand_written",
    description="A hand-written schema: $schema, a type array, oneOf, allOf and a not.",
    parameters={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "size": {"type": ["integer", "null"], "minimum": 0},
            "shape": {"oneOf": [{"type": "string", "enum": ["round"]}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "string"}, {"minLength": 2}]},
            "other": {"type": "string", "not": {"const": "forbidden"}},
        },
        "required": ["size"],
        "additionalProperties": False,
    },
    handler=lambda **kw: kw,
    purity="read_only",
)

DEFINITIONS = (paint_wall, grow_tree, HAND_WRITTEN)


@pytest.fixture(scope="module")
def registry() -> Any:
    return frozen_registry(DEFINITIONS)


def golden(name: str, text: str) -> str:
    path = GOLDEN / name
    if os.environ.get("REYN_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "openai-strict"])
def test_each_target_matches_its_golden_render(registry: Any, target: str) -> None:
    rendered = render_router(registry, ToolContext(surface="router"), target=target)
    text = json.dumps(rendered, indent=2, ensure_ascii=False) + "\n"
    assert text == golden(f"{target}.json", text)


def test_openai_strict_matches_its_golden_render(registry: Any) -> None:
    # the strict target renders what can be strict (grow_tree's map and hand_written's `not` cannot)
    strictable = [paint_wall]
    builder = RegistryBuilder()
    for d in strictable:
        builder.register(d)
    rendered = render_router(builder.freeze(), ToolContext(surface="router"), target="openai-strict")
    text = json.dumps(rendered, indent=2, ensure_ascii=False) + "\n"
    assert text == golden("openai-strict.json", text)


def _walk_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _walk_keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _walk_keys(v)}
    return set()


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.name)
def test_the_gemini_render_holds_no_keyword_gemini_lacks(definition: ToolDefinition) -> None:
    adapted = adapt_parameters(definition.parameters, "gemini").schema
    lacking = {"$ref", "$defs", "$schema", "oneOf", "allOf", "not", "const", "additionalProperties"}
    assert not _walk_keys(adapted) & lacking
    assert not any(isinstance(t, list) for t in _types(adapted))


def _types(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return ([node["type"]] if "type" in node else []) + [t for v in node.values() for t in _types(v)]
    if isinstance(node, list):
        return [t for v in node for t in _types(v)]
    return []


def test_gemini_inlines_an_enum_and_turns_optional_into_nullable() -> None:
    adapted = adapt_parameters(paint_wall.parameters, "gemini")
    props = adapted.schema["properties"]
    assert props["finish"] == {"enum": ["matte", "gloss"], "type": "string"}
    assert props["mode"] == {"type": "string", "enum": ["fast"]}
    assert props["note"]["type"] == "string" and props["note"]["nullable"] is True
    assert adapted.problems == ()  # everything adapted: nothing to warn about


def test_only_what_cannot_be_adapted_is_a_warning() -> None:
    def codes(d: ToolDefinition) -> list[str]:
        return [i.code for i in check_tool_schema(d.parameters, phase_usable=True)]

    assert codes(paint_wall) == []  # a pydantic Enum is no RS102 any more (issue 28)
    issues = check_tool_schema(grow_tree.parameters, phase_usable=True)
    assert [i.code for i in issues] == ["RS101", "RS102", "RS102"]
    messages = " | ".join(i.message for i in issues)
    assert "recursive reference" in messages and "map's value schema" in messages
    assert [i for i in check_tool_schema(HAND_WRITTEN.parameters, phase_usable=True) if i.code == "RS102"]


def test_mcp_keeps_schema_and_the_provider_targets_drop_it() -> None:
    assert adapt_parameters(HAND_WRITTEN.parameters, "mcp").schema == dict(HAND_WRITTEN.parameters)
    for target in ("openai", "anthropic", "gemini", "openai-strict"):
        assert "$schema" not in adapt_parameters(HAND_WRITTEN.parameters, target).schema


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.name)
def test_every_render_is_valid_json_schema_and_accepts_what_the_original_does(
    definition: ToolDefinition, target: str
) -> None:
    adapted = adapt_parameters(definition.parameters, target)
    if target == "openai-strict" and adapted.problems:
        return
    schema = {k: v for k, v in adapted.schema.items() if k != "nullable"}
    Draft202012Validator.check_schema(schema)
    compact_json(schema)  # JSON all through


def test_an_unknown_target_is_a_value_error_naming_the_targets() -> None:
    with pytest.raises(ValueError, match="openai, openai-strict, anthropic, gemini, mcp"):
        adapt_parameters({"type": "object"}, "cohere")


@pytest.mark.parametrize(
    "model, target",
    [
        ("gpt-4o-mini", "openai"),
        ("openai/gpt-4.1", "openai"),
        ("gemini/gemini-2.0-flash", "gemini"),
        ("vertex_ai/gemini-1.5-pro", "gemini"),
        ("anthropic/claude-3-5-sonnet-latest", "anthropic"),
        ("claude-3-haiku-20240307", "anthropic"),
        ("bedrock/anthropic.claude-3-sonnet-20240229-v1:0", "anthropic"),
        ("ollama/llama3", "openai"),
    ],
)
def test_the_runtime_picks_the_target_of_its_models_provider(model: str, target: str) -> None:
    assert target_for_model(model) == target
    if target == "openai":
        assert target_for_model(model, strict=True) == "openai-strict"


def test_inlining_shared_references_is_bounded() -> None:
    # 30 levels, each referring twice to the next: 2**30 nodes if inlined naively
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(30)
    }
    defs["d30"] = {"type": "string"}
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    adapted = adapt_parameters(schema, "gemini")
    assert any("would exceed" in p for p in adapted.problems)
    assert len(json.dumps(adapted.schema)) < 5_000_000
