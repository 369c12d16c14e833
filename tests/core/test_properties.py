"""Property-based tests (hypothesis): the name rule, allowed_ops matching, and argument validation —
the fast validator must never accept what jsonschema rejects."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from reyn_core import InvalidToolArguments, ToolContext, ToolDefinition, ToolRegistrationError
from reyn_core.gates import op_matches, ops_admit
from reyn_core.host import RegistryBuilder, invoke_tool, render_phase, render_router
from reyn_core.registry import collision_key
from reyn_core.tool import is_valid_tool_name
from reyn_core.validation import (
    optional_non_nullable,
    parse_arguments,
    without_null_optionals,
)

# No example database: nothing is written into the shared working tree.
RELAXED = settings(
    deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
valid_names = st.text(alphabet=NAME_ALPHABET, min_size=1, max_size=64)
SPEC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}", re.ASCII)


def definition(name: str, cluster: str = "c") -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="A tool.",
        handler=lambda **kw: kw,
        cluster=cluster,
        parameters={"type": "object", "properties": {}},
    )


# --------------------------------------------------------------------------- name rule


@RELAXED
@given(st.one_of(st.text(max_size=80), valid_names, valid_names.map(lambda n: n + "\n")))
def test_name_rule_accepts_exactly_the_provider_safe_names(name: str) -> None:
    assert is_valid_tool_name(name) == (SPEC_NAME.fullmatch(name) is not None)


@RELAXED
@given(st.text(max_size=80))
def test_registration_accepts_a_name_iff_the_rule_does(name: str) -> None:
    builder = RegistryBuilder()
    try:
        builder.register(definition(name))
        registered = True
    except ToolRegistrationError as exc:
        registered = False
        assert exc.code == "RT002"
    assert registered == (SPEC_NAME.fullmatch(name) is not None)


@RELAXED
@given(valid_names)
def test_every_valid_name_renders_unchanged_on_the_router(name: str) -> None:
    builder = RegistryBuilder()
    builder.register(definition(name))
    [item] = render_router(builder.freeze(), ToolContext())
    assert item["function"]["name"] == name


# --------------------------------------------------------------------------- allowed_ops

identifiers = st.text(alphabet="abcdefgh_", min_size=1, max_size=8)


@RELAXED
@given(identifiers, identifiers)
def test_exact_name_and_cluster_always_admit(name: str, cluster: str) -> None:
    tool = definition(name, cluster)
    assert op_matches(name, tool) and op_matches(cluster, tool)


@RELAXED
@given(identifiers, identifiers, identifiers)
def test_a_plain_entry_admits_only_its_name_or_cluster(name: str, cluster: str, entry: str) -> None:
    assert op_matches(entry, definition(name, cluster)) == (entry in (name, cluster))


@RELAXED
@given(identifiers, identifiers, identifiers)
def test_prefix_glob_admits_exactly_the_names_with_that_prefix(name: str, cluster: str, prefix: str) -> None:
    assert op_matches(prefix + "*", definition(name, cluster)) == name.startswith(prefix)


@RELAXED
@given(identifiers, identifiers)
def test_globs_are_case_sensitive(name: str, cluster: str) -> None:
    assume(name.upper() != name)
    assert not op_matches(name.upper() + "*", definition(name, cluster)) or name.upper().startswith(name)


@RELAXED
@given(identifiers, identifiers)
def test_empty_allowed_ops_admit_nothing(name: str, cluster: str) -> None:
    assert not ops_admit([], definition(name, cluster))


@RELAXED
@given(
    identifiers,
    identifiers,
    st.lists(st.one_of(identifiers, identifiers.map(lambda s: s + "*")), max_size=5),
    st.randoms(use_true_random=False),
)
def test_allowed_ops_order_and_duplicates_do_not_matter(
    name: str, cluster: str, ops: list[str], rnd: Any
) -> None:
    tool = definition(name, cluster)
    shuffled = ops + ops
    rnd.shuffle(shuffled)
    assert ops_admit(ops, tool) == ops_admit(shuffled, tool) == any(op_matches(o, tool) for o in ops)


@RELAXED
@given(
    # Names that differ only in case or separators collide (RT004): draw names distinct under that rule.
    st.dictionaries(identifiers, identifiers, min_size=1, max_size=6).filter(
        lambda d: len({collision_key(k) for k in d}) == len(d)
    ),
    st.lists(
        st.one_of(identifiers, identifiers.map(lambda s: s + "*"), identifiers.map(lambda s: "?" + s)),
        max_size=4,
    ),
)
def test_phase_renderer_shows_exactly_the_tools_allowed_ops_admit(
    tools: dict[str, str], ops: list[str]
) -> None:
    builder = RegistryBuilder()
    for name, cluster in tools.items():
        builder.register(definition(name, cluster))
    registry = builder.freeze()
    shown = {op.kind for op in render_phase(registry, ToolContext(surface="phase"), ops).ops}
    assert shown == {t.name for t in registry if ops_admit(ops, t)}


# --------------------------------------------------------------------------- argument validation

SCALAR_TYPES = ["string", "integer", "number", "boolean", "null"]
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.integers(-50, 50).map(float),
    st.text(max_size=6),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
numbers = st.one_of(st.integers(-20, 20), st.floats(-20, 20, allow_nan=False).map(lambda f: round(f, 1)))


# Hypothesis favours "simple" draws (0, False, the first element); these give real frequencies.
rarely = st.sampled_from([False, False, False, True])
seldom = st.sampled_from([False] * 15 + [True])


@st.composite
def scalar_schemas(draw: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    kind = draw(st.sampled_from(["type", "types", "enum", "const", "none"]))
    if kind == "type":
        schema["type"] = draw(st.sampled_from(SCALAR_TYPES))
    elif kind == "types":
        schema["type"] = draw(st.lists(st.sampled_from(SCALAR_TYPES), min_size=1, max_size=3, unique=True))
    elif kind == "enum":
        small = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=2))
        schema["enum"] = draw(st.lists(st.one_of(small, st.lists(small, max_size=2)), min_size=1, max_size=4))
    elif kind == "const":
        schema["const"] = draw(json_values)
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if draw(rarely):
            schema[key] = draw(numbers)
    for key in ("minLength", "maxLength"):
        if draw(rarely):
            schema[key] = draw(st.integers(0, 5))
    if draw(st.booleans()):
        schema["description"] = "d"
    if draw(st.booleans()):
        schema["default"] = draw(json_scalars)
    return schema


@st.composite
def property_schemas(draw: Any) -> dict[str, Any]:
    if draw(rarely):
        array: dict[str, Any] = {"type": "array"}
        if draw(st.booleans()):
            array["items"] = draw(scalar_schemas())
        if draw(st.booleans()):
            array["minItems"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            array["maxItems"] = draw(st.integers(0, 3))
        return array
    return draw(scalar_schemas())


@st.composite
def flat_schemas(draw: Any) -> dict[str, Any]:
    props = draw(
        st.dictionaries(st.sampled_from(["a", "b", "c", "d/e", "f~g"]), property_schemas(), max_size=4)
    )
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(st.sampled_from(["a", "b", "c", "z"]), unique=True, max_size=3))
    if draw(st.booleans()):
        schema["additionalProperties"] = draw(st.booleans())
    return schema


TYPED_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=7),
    "integer": st.one_of(st.integers(-25, 25), st.integers(-25, 25).map(float)),
    "number": numbers,
    "boolean": st.booleans(),
    "null": st.sampled_from([None, 0, False, ""]),
}


def lookalike(value: Any) -> Any:
    """A value Python finds equal but JSON does not (True vs 1, False vs 0), or the reverse (1 vs 1.0)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return {0: False, 1: True}.get(value, float(value))
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [lookalike(v) for v in value]
    if isinstance(value, dict):
        return {k: lookalike(v) for k, v in value.items()}
    return value


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values near the schema (often valid, or valid-looking to Python), mixed with arbitrary JSON."""
    candidates: list[st.SearchStrategy[Any]] = [json_values]
    if "enum" in schema:
        candidates.append(st.sampled_from(schema["enum"]))
        candidates.append(st.sampled_from(schema["enum"]).map(lookalike))
    if "const" in schema:
        candidates.append(st.just(schema["const"]))
        candidates.append(st.just(lookalike(schema["const"])))
    if schema.get("type") == "array":
        candidates.append(st.lists(value_for(schema.get("items", {})), max_size=4))
    for key in ("minLength", "maxLength"):
        if key in schema:
            n = schema[key]
            candidates.append(st.text(alphabet="ab東", min_size=max(n - 1, 0), max_size=n + 1))
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if key in schema:
            bound = schema[key]
            candidates.append(
                st.sampled_from([bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5, float(bound)])
            )
    for key in ("minItems", "maxItems"):
        if key in schema:
            candidates.append(
                st.lists(st.integers(0, 3), min_size=max(schema[key] - 1, 0), max_size=schema[key] + 1)
            )
    types = schema.get("type")
    for t in [types] if isinstance(types, str) else types or []:
        if t in TYPED_VALUES:
            candidates.append(TYPED_VALUES[t])
            candidates.append(TYPED_VALUES[t].map(lookalike))
    candidates.extend([numbers, st.text(max_size=7), st.booleans(), st.none()])
    return st.one_of(*candidates)


@st.composite
def schema_and_arguments(draw: Any) -> tuple[dict[str, Any], Any]:
    schema = draw(flat_schemas())
    args: dict[str, Any] = {}
    for key, sub in schema["properties"].items():
        if not draw(rarely):
            args[key] = draw(value_for(sub))
    if draw(rarely):
        args[draw(st.sampled_from(["x", "z", "a"]))] = draw(json_values)
    if draw(seldom):
        return schema, draw(json_values)  # sometimes not even an object
    return schema, args


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_arguments())
def test_dispatcher_accepts_arguments_iff_jsonschema_does(case: tuple[dict[str, Any], Any]) -> None:
    schema, args = case
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="t", description="Echo.", parameters=schema, handler=lambda **kw: kw)
    )
    registry = builder.freeze()

    async def call() -> bool:
        try:
            await invoke_tool(registry, "t", args, ToolContext())
            return True
        except InvalidToolArguments:
            return False

    # None and an empty string mean "no arguments" ({}); other strings are JSON text from a model.
    # A null for an optional, non-nullable property means "not given" (what strict mode sends).
    parsed, problems = parse_arguments(args)
    parsed = without_null_optionals(parsed, optional_non_nullable(schema))
    assert asyncio.run(call()) == (not problems and Draft202012Validator(schema).is_valid(parsed))


@RELAXED
@given(st.dictionaries(st.text(max_size=5), json_values, max_size=4))
def test_json_string_arguments_parse_like_the_dict(args: dict[str, Any]) -> None:
    assert parse_arguments(json.dumps(args)) == (args, [])
