"""Schema patterns run on RE2: bounded time whatever the pattern and input, in the fast path and the
jsonschema path alike (pattern, patternProperties and the keywords that consult them); a pattern RE2
cannot express is refused at registration (RS007) naming the construct; the two paths agree."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reyn_core import SchemaRefused, ToolDefinition, ToolRegistrationError, json_schema_validator
from reyn_core.host import RegistryBuilder
from reyn_core.schema import check_tool_schema
from reyn_core.validation import (
    MAX_PATTERN_LENGTH,
    SchemaNotCompiled,
    UnusablePattern,
    compile_pattern,
    compile_validator,
)

EVIL = "^(a+)+$"
ATTACK = "a" * 40 + "!"  # about 2**40 steps for a backtracking engine


def register(schema: dict[str, Any]) -> ToolRegistrationError:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    return info.value


def test_backtracking_patterns_finish_in_every_path() -> None:
    # In a fresh process with a generous timeout: a backtracking engine would not finish for days.
    code = f"""
import asyncio, json
from reyn_core import ToolContext, ToolDefinition, InvalidToolArguments
from reyn_core.host import RegistryBuilder, ToolRegistry, invoke_tool
EVIL, ATTACK = {EVIL!r}, {ATTACK!r}
schemas = {{
    "fast": {{"type": "object", "properties": {{"a": {{"type": "string", "pattern": EVIL}}}}}},
    "general": {{"type": "object", "properties": {{"a": {{"type": "string", "pattern": EVIL}}}},
                "$comment": "x"}},
    "items": {{"type": "object", "properties": {{"a": {{"type": "array", "items": {{"pattern": EVIL}}}}}}}},
    "keys": {{"type": "object", "patternProperties": {{EVIL: {{}}}}, "additionalProperties": False}},
    "uneval": {{"type": "object", "patternProperties": {{EVIL: {{}}}}, "unevaluatedProperties": False}},
    "names": {{"type": "object", "propertyNames": {{"pattern": EVIL}}}},
}}
args = {{"fast": {{"a": ATTACK}}, "general": {{"a": ATTACK}}, "items": {{"a": [ATTACK]}},
        "keys": {{ATTACK: 1}}, "uneval": {{ATTACK: 1}}, "names": {{ATTACK: 1}}}}
builder = RegistryBuilder()
for name, schema in schemas.items():
    builder.register(ToolDefinition(name=name, description="x", parameters=schema, handler=lambda **kw: kw))
registry = builder.freeze()
out = {{}}
for name in schemas:
    try:
        asyncio.run(invoke_tool(registry, name, args[name], ToolContext()))
        out[name] = "accepted"
    except InvalidToolArguments as exc:
        out[name] = [p.pointer + " " + p.message for p in exc.problems]
print(json.dumps(out))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["fast"] == out["general"] == [f"/a {ATTACK!r} does not match {EVIL!r}"]  # one validator
    assert out["items"] == [f"/a/0 {ATTACK!r} does not match {EVIL!r}"]
    assert "does not match any of the regexes" in out["keys"][0]
    assert "Unevaluated properties are not allowed" in out["uneval"][0]
    assert "does not match" in out["names"][0]


CONSTRUCTS = {
    "(a)\\1": "backreference",
    "(?P<x>a)(?P=x)": "named backreference",
    "(?<x>a)\\k<x>": "named backreference",
    "(?=a)a": "lookahead",
    "(?!a)b": "negative lookahead",
    "(?<=a)b": "lookbehind",
    "(?<!a)b": "negative lookbehind",
    "(?>a)": "atomic group",
    "a++": "possessive quantifier",
}


@pytest.mark.parametrize("pattern", list(CONSTRUCTS))
def test_patterns_re2_cannot_run_are_refused_at_registration_naming_the_construct(pattern: str) -> None:
    error = register({"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}})
    assert error.code == "RS007"
    assert repr(pattern) in error.message and CONSTRUCTS[pattern] in error.message
    with pytest.raises(SchemaRefused) as refused:
        json_schema_validator({"type": "object", "properties": {"a": {"pattern": pattern}}})
    assert refused.value.problems[0].pointer == "/properties/a/pattern"


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"type": "object", "patternProperties": {"(?=x)": {}}}, "/patternProperties/(?=x)"),
        ({"type": "object", "$defs": {"d": {"pattern": "(a)\\1"}}}, "/$defs/d/pattern"),
        (
            {"type": "object", "properties": {"a": {"items": {"pattern": "(?!a)"}}}},
            "/properties/a/items/pattern",
        ),
        (
            {"type": "object", "anyOf": [{"propertyNames": {"pattern": "(?<=a)"}}]},
            "/anyOf/0/propertyNames/pattern",
        ),
        (
            {"type": "object", "properties": {"a": {"pattern": "x" * (MAX_PATTERN_LENGTH + 1)}}},
            "/properties/a/pattern",
        ),
        ({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}}, "/properties/a/pattern"),
    ],
)
def test_every_pattern_location_is_checked(schema: dict[str, Any], pointer: str) -> None:
    issues = [i for i in check_tool_schema(schema, phase_usable=True) if i.severity == "error"]
    assert [(i.code, i.pointer) for i in issues] == [("RS007", pointer)]


def test_an_unusable_pattern_the_screening_cannot_see_is_refused_when_compiled() -> None:
    # A $ref into data the screening does not treat as a schema: the compile refuses the pattern, so
    # the tool is refused at registration and no call ever runs it.
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/d/enum/0"}},
        "$defs": {"d": {"enum": [{"pattern": "(a)\\1"}]}},
    }
    with pytest.raises(SchemaNotCompiled, match="regex"):
        compile_validator(schema)
    with pytest.raises(ToolRegistrationError):
        RegistryBuilder().register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))


def test_pattern_length_is_bounded_at_run_time_too() -> None:
    with pytest.raises(UnusablePattern, match="the limit is 1000"):
        compile_pattern("a" * (MAX_PATTERN_LENGTH + 1))


def test_ecma_unicode_escapes_work() -> None:
    validate = json_schema_validator({"type": "object", "properties": {"a": {"pattern": "^\\u00e9+$"}}})
    assert validate({"a": "éé"}) == [] and validate({"a": "e"})
    assert compile_pattern("\\\\u00e9").search("\\u00e9")  # an escaped backslash stays a backslash


def test_import_reyn_core_does_not_import_re2() -> None:
    code = "import sys, reyn_core; print('re2' in sys.modules, '_re2' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["False", "False"]


# --------------------------------------------------------------------------- the two paths agree

PATTERNS = [
    EVIL,
    "^[a-c]{2,4}$",
    "b",
    "^$",
    "\\d",
    "^\\p{Lu}",
    "é|ü",
    "^\\u00e9",
    "(?i)^AB",
    "^a.b$",
    "[^a]",
    "^(ab|a)*c?$",
]


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(PATTERNS),
    st.one_of(st.text(alphabet="aAbBcé1 ü\n", max_size=12), st.integers(), st.none()),
)
def test_patterns_decide_as_re2_does(pattern: str, value: Any) -> None:
    # RE2 (the engine the registration screens patterns with) as the outside oracle of the one
    # validator's linear-time engine: same verdict on every sampled pattern and value.
    schema = {"type": "object", "properties": {"a": {"pattern": pattern, "maxLength": 10}}}
    expected = not isinstance(value, str) or (
        len(value) <= 10 and compile_pattern(pattern).search(value) is not None
    )
    assert (json_schema_validator(schema)({"a": value}) == []) == expected
