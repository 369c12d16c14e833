"""Argument problems a model can act on: "expected integer or null, got string" at a JSON pointer,
worded from the one validator's own errors (``validation.messages``)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from typing import Any, Literal, Optional

import pytest
from hypothesis import HealthCheck, given, settings

from reyn_core import ToolContext, ToolDefinition, tool
from reyn_core.host import RegistryBuilder, dispatch_tool
from reyn_core.validation import compile_validator


def _strategies() -> Any:
    """The schema/argument strategies of the validity property tests (test_properties.py)."""
    path = Path(__file__).with_name("test_properties.py")
    spec = importlib.util.spec_from_file_location("_reyn_property_strategies", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROPS = _strategies()


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def problems(schema: dict[str, Any], args: Any) -> list[str]:
    return [p.render() for p in compile_validator(schema)(args)]


# --------------------------------------------------------------------------- the words

WORDS = [
    (obj({"n": {"type": ["integer", "null"]}}), {"n": "1"}, ["/n: expected integer or null, got string"]),
    (obj({"n": {"type": "integer"}}), {"n": 1.5}, ["/n: expected integer, got number"]),
    (obj({"n": {"type": "integer"}}), {"n": True}, ["/n: expected integer, got boolean"]),
    (obj({"m": {"enum": ["a", "b"]}}), {"m": "c"}, ["/m: expected one of 'a', 'b', got 'c'"]),
    (obj({"m": {"enum": ["a", None, 2]}}), {"m": "c"}, ["/m: expected one of 'a', null, 2, got 'c'"]),
    (obj({"m": {"enum": ["only"]}}), {"m": "c"}, ["/m: expected 'only', got 'c'"]),
    (obj({"k": {"const": "a"}}), {"k": "c"}, ["/k: expected 'a', got 'c'"]),
    (obj({"k": {"const": True}}), {"k": 1}, ["/k: expected true, got 1"]),
    # A wrong type is the one problem at its pointer (the enum would only add noise).
    (obj({"m": {"type": "string", "enum": ["a", "b"]}}), {"m": 3}, ["/m: expected string, got integer"]),
    (obj({"n": {"type": "integer", "minimum": 1}}), {"n": 0}, ["/n: must be >= 1, got 0"]),
    (obj({"n": {"type": "number", "exclusiveMaximum": 2}}), {"n": 2.5}, ["/n: must be < 2, got 2.5"]),
    (
        obj({"s": {"type": "string", "minLength": 3}}),
        {"s": "ab"},
        ["/s: must be at least 3 characters, got 2"],
    ),
    (
        obj({"l": {"type": "array", "items": {"type": "integer"}, "maxItems": 1}}),
        {"l": [1, "x"]},
        ["/l: must have at most 1 items, got 2", "/l/1: expected integer, got string"],
    ),
    (obj({"a": {"type": "string"}}, required=["a"]), {}, ["/a: is a required property and is missing"]),
    (
        obj({"a": {"type": "string"}, "b": {"type": "integer"}}, additionalProperties=False),
        {"a": "x", "c": 1},
        ["/c: unexpected property (allowed: a, b)"],
    ),
    (obj({"a": {"type": "string"}}), "text", ["arguments must be a JSON object, got string"]),
]


@pytest.mark.parametrize(("schema", "args", "expected"), WORDS)
def test_each_keyword_says_what_was_expected_and_what_came(schema, args, expected):
    assert sorted(problems(schema, args)) == sorted(expected)


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROPS.schema_and_arguments())
def test_every_problem_has_a_pointer_and_a_readable_message(case: tuple[dict[str, Any], Any]) -> None:
    schema, args = case
    if isinstance(args, dict) and any(isinstance(v, float) and not math.isfinite(v) for v in args.values()):
        return
    for message in problems(schema, args):
        assert ": " in message or message.startswith("arguments"), (schema, args, message)


# --------------------------------------------------------------------------- alternatives

ALTERNATIVES = [
    # pydantic's Optional[int]
    (
        obj({"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}),
        {"n": "1"},
        ["/n: expected integer or null, got string"],
    ),
    (
        obj({"n": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}),
        {"n": [1]},
        ["/n: expected integer or string, got array"],
    ),
    (
        obj({"n": {"anyOf": [{"type": ["integer", "boolean"]}, {"type": "null"}]}}),
        {"n": "x"},
        ["/n: expected integer or boolean or null, got string"],
    ),
    (
        obj({"m": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]}}),
        {"m": "c"},
        ["/m: expected one of 'a', 'b' or null, got 'c'"],
    ),
    (
        obj({"m": {"anyOf": [{"const": "auto"}, {"type": "integer"}]}}),
        {"m": "manual"},
        ["/m: expected 'auto' or integer, got 'manual'"],
    ),
    # The value has the type of exactly one alternative: what is wrong inside it.
    (
        obj({"n": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}}),
        {"n": 0},
        ["/n: must be >= 1, got 0"],
    ),
    (
        obj(
            {
                "p": {
                    "anyOf": [
                        {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                        {"type": "null"},
                    ]
                }
            }
        ),
        {"p": {"x": "1"}},
        ["/p/x: expected integer, got string"],
    ),
    (
        {
            "type": "object",
            "properties": {"p": {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}},
            "$defs": {"P": {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}},
        },
        {"p": {}},
        ["/p/y: is a required property and is missing"],
    ),
    # Nested alternatives read the same way.
    (
        obj({"n": {"anyOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"type": "null"}]}}),
        {"n": 1.5},
        ["/n: expected integer or string or null, got number"],
    ),
]


@pytest.mark.parametrize(("schema", "args", "expected"), ALTERNATIVES)
def test_alternatives_say_what_was_expected(schema, args, expected):
    assert problems(schema, args) == expected


def test_alternatives_of_one_type_list_each_ones_problem():
    schema = obj(
        {"p": {"anyOf": [{"type": "object", "required": ["x"]}, {"type": "object", "required": ["y"]}]}}
    )
    (message,) = problems(schema, {"p": {}})
    assert message == (
        "/p: matches none of the anyOf alternatives (#0: /x: is a required property and is missing; "
        "#1: /y: is a required property and is missing)"
    )


def test_one_of_matching_twice_says_so():
    schema = obj({"n": {"oneOf": [{"type": "integer"}, {"type": "number"}]}})
    assert problems(schema, {"n": 1}) == [
        "/n: matches more than one of the oneOf alternatives; it must match exactly one"
    ]


def test_no_message_keeps_jsonschema_wording_for_alternatives():
    schema = obj({"n": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "m": {"oneOf": [{"enum": [1]}]}})
    for message in problems(schema, {"n": "1", "m": 2}):
        assert "is not valid under any of the given schemas" not in message
        assert "is not of type" not in message


def test_other_keywords_keep_an_informative_message():
    schema = obj({"l": {"type": "array", "uniqueItems": True}, "n": {"type": "integer", "multipleOf": 3}})
    assert sorted(problems(schema, {"l": [1, 1], "n": 4})) == [
        "/l: [1, 1] has non-unique elements",
        "/n: 4 is not a multiple of 3",
    ]


def test_long_enums_and_values_are_shortened():
    schema = obj({"m": {"enum": [f"v{i}" for i in range(30)]}})
    (message,) = problems(schema, {"m": "x" * 500})
    assert "(and 18 more)" in message and "..." in message and len(message) < 400


# --------------------------------------------------------------------------- through the dispatcher


@tool(cluster="demo", purity="read_only")
def pick(n: Optional[int] = None, mode: Literal["fast", "slow"] = "fast") -> dict[str, Any]:
    """Pick a number in a mode."""
    return {"n": n, "mode": mode}


async def test_the_envelope_carries_the_pointer_and_the_readable_message():
    builder = RegistryBuilder()
    builder.register(pick)
    builder.register(
        ToolDefinition(
            name="limit",
            description="Set a limit.",
            parameters=obj({"limit": {"type": ["integer", "null"]}}, additionalProperties=False),
            handler=lambda **kw: kw,
        )
    )
    registry = builder.freeze()
    ctx = ToolContext(surface="router")
    envelope = await dispatch_tool(registry, "pick", {"n": "1", "mode": "medium"}, ctx)
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert sorted(envelope["error"]["errors"], key=lambda e: e["path"]) == [
        {"path": "/mode", "message": "expected one of 'fast', 'slow', got 'medium'"},
        {"path": "/n", "message": "expected integer or null, got string"},
    ]
    assert "expected integer or null, got string" in envelope["error"]["message"]
    envelope = await dispatch_tool(registry, "limit", {"limit": "10"}, ctx)
    assert envelope["error"]["errors"] == [
        {"path": "/limit", "message": "expected integer or null, got string"}
    ]
    assert (await dispatch_tool(registry, "pick", {"n": 3}, ctx))["status"] == "ok"


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf"])
def test_alternatives_that_are_all_false_are_an_argument_problem(keyword: str) -> None:
    # The official suite's "anyOf/oneOf of false subschemas" once raised IndexError in the wording.
    assert problems({keyword: [False, False]}, 1) == [
        f"matches none of the {keyword} alternatives (#0: no value is allowed here; "
        "#1: no value is allowed here)"
    ]
    assert problems({keyword: [True, False]}, 1) == []  # the positive control


async def test_all_false_alternatives_answer_invalid_arguments_through_the_dispatcher() -> None:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(
            name="never",
            description="Accepts no value of x.",
            parameters=obj({"x": {"anyOf": [False, False]}}),
            handler=lambda **kw: kw,
        )
    )
    registry = builder.freeze()
    ctx = ToolContext(surface="router")
    envelope = await dispatch_tool(registry, "never", {"x": 1}, ctx)
    assert envelope["error"]["kind"] == "invalid_arguments"
    (problem,) = envelope["error"]["errors"]
    assert problem["path"] == "/x" and problem["message"].startswith("matches none of the anyOf")
    assert (await dispatch_tool(registry, "never", {}, ctx))["status"] == "ok"
