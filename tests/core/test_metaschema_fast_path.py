"""The cold-registration fast paths are held equal to the slow paths they stand in for.

* ``is_valid_schema`` (a structural transcription of the Draft 2020-12 meta-schema) against
  jsonschema's meta-schema validation: identical verdicts over generated schemas (valid and broken
  in every keyword) and over real ones (the repository's tool manifests and golden renders, the
  JSON Schema meta-schemas themselves, pydantic's schemas for the mcp SDK's models, the BFCL corpus
  when the benchmark's cache holds it); ``metaschema_problems`` words exactly what jsonschema words.
* The iterative ``subschemas`` against the recursive walk it replaced: the same pointers and nodes
  in the same order (lint and problem order, and RS102's "first seen" pointer, depend on it).
* ``check_tool_schema`` skips the reference walk when the schema's JSON has no ``"$`` and the
  pattern walk when it has no ``"pattern``: those walks then find nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reyn_core.metaschema import SIMPLE_TYPES, is_valid_schema
from reyn_core.schema import check_tool_schema
from reyn_core.validation import (
    jsonschema_metaschema_problems,
    metaschema_problems,
    pattern_problems,
    reference_problems,
    subschemas,
)

ROOT = Path(__file__).resolve().parents[2]


def jsonschema_verdict(schema: Any) -> bool:
    return not jsonschema_metaschema_problems(schema if isinstance(schema, dict) else {}, limit=1)


def assert_same_verdict(schema: Any) -> None:
    expected = jsonschema_verdict(schema)
    assert is_valid_schema(schema) is expected, (schema, expected)
    # and the public function gives exactly jsonschema's problems, words and pointers
    assert metaschema_problems(schema) == jsonschema_metaschema_problems(schema)


# --------------------------------------------------------------------------- generated schemas

TYPE_NAMES = sorted(SIMPLE_TYPES)
ODD_STRINGS = ["", "int", "str", "a", "_a.b-c", "1a", "abc\n", "a b", "a#", "a#b", "#", "#/$defs/a", "x:y"]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.sampled_from([0.0, -0.0, 1.5, 2.0, -1.0, 1e300, math.nan, math.inf, -math.inf, 2**70]),
    st.sampled_from([*TYPE_NAMES, *ODD_STRINGS]),
    st.text(max_size=4),
)
json_values = st.recursive(
    scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=6,
)
# Not JSON data, but check_tool_schema accepts them (json.dumps does): tuples are not arrays to
# jsonschema, and integer keys are not keywords.
odd_values = st.one_of(
    st.lists(st.sampled_from(TYPE_NAMES), max_size=3).map(tuple),
    st.dictionaries(st.integers(0, 3), st.booleans(), min_size=1, max_size=2),
)

SUBSCHEMA_KEYS = [
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "additionalItems",
]
MAP_KEYS = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"]
ARRAY_KEYS = ["prefixItems", "allOf", "anyOf", "oneOf"]
STRING_KEYS = ["$schema", "$ref", "$dynamicRef", "$recursiveRef", "$comment", "title", "description"]
STRING_KEYS += ["format", "contentEncoding", "contentMediaType", "pattern", "$id"]
ANCHOR_KEYS = ["$anchor", "$dynamicAnchor", "$recursiveAnchor"]
NUMBER_KEYS = ["maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "multipleOf"]
COUNT_KEYS = ["maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains"]
COUNT_KEYS += ["maxProperties", "minProperties"]
BOOLEAN_KEYS = ["deprecated", "readOnly", "writeOnly", "uniqueItems"]
OTHER_KEYS = ["enum", "examples", "const", "default", "type", "required", "dependentRequired"]
OTHER_KEYS += ["dependencies", "$vocabulary", "x-extension", "foo", "$foo", "Type"]
ALL_KEYS = (
    SUBSCHEMA_KEYS
    + MAP_KEYS
    + ARRAY_KEYS
    + STRING_KEYS
    + ANCHOR_KEYS
    + NUMBER_KEYS
    + COUNT_KEYS
    + BOOLEAN_KEYS
    + OTHER_KEYS
)

string_arrays = st.lists(st.sampled_from(["a", "b", "c", "kind"]), max_size=3)


def keyword_value(key: str, children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly what the meta-schema allows for ``key``, sometimes anything at all."""
    if key in SUBSCHEMA_KEYS:
        valid: st.SearchStrategy[Any] = children
    elif key in MAP_KEYS:
        valid = st.dictionaries(st.sampled_from(["a", "b", "^x", "~/"]), children, max_size=3)
    elif key in ARRAY_KEYS:
        valid = st.lists(children, min_size=1, max_size=3)
    elif key in STRING_KEYS:
        valid = st.sampled_from(ODD_STRINGS) | st.text(max_size=4)
    elif key in ANCHOR_KEYS:
        valid = st.sampled_from(ODD_STRINGS)
    elif key in NUMBER_KEYS:
        valid = st.integers(-2, 3) | st.sampled_from([0.5, 0.0, -0.5, math.nan, math.inf])
    elif key in COUNT_KEYS:
        valid = st.integers(-1, 4) | st.sampled_from([2.0, 2.5, -0.0, True, math.inf])
    elif key in BOOLEAN_KEYS:
        valid = st.booleans() | st.sampled_from([0, 1])
    elif key == "type":
        valid = st.sampled_from([*TYPE_NAMES, "int", "any", "Object"]) | st.lists(
            st.sampled_from([*TYPE_NAMES, "int"]), max_size=3
        )
    elif key in ("required",):
        valid = string_arrays
    elif key in ("dependentRequired", "dependencies"):
        valid = st.dictionaries(st.sampled_from(["a", "b"]), string_arrays | children, max_size=2)
    elif key == "$vocabulary":
        valid = st.dictionaries(st.sampled_from(["https://x", "y"]), st.booleans() | scalars, max_size=2)
    else:
        valid = json_values
    return st.one_of(valid, valid, valid, json_values, children, odd_values)


def schema_nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    entry = st.sampled_from(ALL_KEYS).flatmap(lambda k: st.tuples(st.just(k), keyword_value(k, children)))
    return st.lists(entry, max_size=5).map(dict)


schemas = st.recursive(
    st.booleans() | st.just({}) | st.builds(dict, type=st.sampled_from(TYPE_NAMES)),
    schema_nodes,
    max_leaves=10,
)
object_schemas = schemas.map(lambda s: s if isinstance(s, dict) else {"not": s})


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(object_schemas)
def test_fast_verdict_equals_jsonschema_on_generated_schemas(schema: dict[str, Any]) -> None:
    assert_same_verdict(schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"definitions": 5}}},  # '#meta' is the whole meta-schema at any depth
        {"items": {"$recursiveAnchor": "1a"}},
        {"dependencies": {"a": ["x", "x"]}},
        {"dependencies": {"a": {"type": "x"}}},
        {"dependencies": {"a": True, "b": ["c"]}},
        {"multipleOf": math.nan},
        {"multipleOf": 0},
        {"multipleOf": -0.0},
        {"type": ["string", "string"]},
        {"type": []},
        {"type": ("string",)},
        {"$anchor": "abc\n"},  # the meta-schema's patterns run on Python's re: '$' before a final \n
        {"$anchor": "abc\nd"},
        {"$recursiveAnchor": "abc\n"},  # ...except this one at the root, which runs on RE2
        {"$recursiveAnchor": "abc"},
        {"$dynamicAnchor": "abc\n"},
        {"properties": {"a": {"$recursiveAnchor": "abc\n"}}},
        {"$id": "a#b"},
        {"$id": "a\n#"},
        {"minLength": 2.0},
        {"minLength": True},
        {"minLength": -0.0},
        {"minLength": math.inf},
        {"maximum": math.inf},
        {"enum": ()},
        {"enum": []},
        {"required": []},
        {"required": ["a", "a"]},
        {"allOf": []},
        {"$vocabulary": {1: True}},
        {"$vocabulary": {"x": 1}},
        {1: "not a keyword"},
        {"const": ("a",), "default": {1: 2}, "examples": [(), {}]},
        {"properties": {1: {"type": "string"}}},
        {"properties": {"a": ()}},
    ],
)
def test_fast_verdict_equals_jsonschema_on_edge_cases(schema: dict[Any, Any]) -> None:
    assert_same_verdict(schema)


@pytest.mark.parametrize(
    "schema",
    [
        {"minimum": __import__("decimal").Decimal("1")},
        {"multipleOf": __import__("fractions").Fraction(1, 3)},
        {"maxLength": __import__("decimal").Decimal("2")},
    ],
)
def test_values_that_are_not_json_go_to_jsonschema(schema: dict[str, Any]) -> None:
    # The fast path only says "valid" for JSON data; anything else is jsonschema's to decide.
    assert is_valid_schema(schema) is False
    assert metaschema_problems(schema) == jsonschema_metaschema_problems(schema)


def test_a_schema_containing_itself_goes_to_jsonschema() -> None:
    node: dict[str, Any] = {"type": "object"}
    node["properties"] = {"self": node}
    assert is_valid_schema(node) is False  # RecursionError inside: not decided here


# --------------------------------------------------------------------------- real schemas


def real_schemas() -> Iterator[tuple[str, Any]]:
    for path in sorted(ROOT.glob("reyn_builtin_tools/*/reyn_tools_*/tools.json")):
        for tool in json.loads(path.read_text())["tools"]:
            yield f"{path.parent.name}:{tool['name']}", tool["parameters"]
    for path in sorted((ROOT / "tests/core/golden").glob("router*.json")):
        for tool in json.loads(path.read_text()):
            yield f"{path.name}:{tool['function']['name']}", tool["function"]["parameters"]
    import jsonschema_specifications

    for uri, contents in jsonschema_specifications.REGISTRY.items():
        yield uri, contents.contents
    import mcp.types
    from pydantic import BaseModel

    for name in sorted(dir(mcp.types)):
        obj = getattr(mcp.types, name)
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj is not BaseModel:
            try:
                yield f"mcp.types.{name}", obj.model_json_schema()
            except Exception:  # a generic model without parameters, say
                continue


def test_real_schemas_get_the_same_verdict() -> None:
    seen = 0
    for label, schema in real_schemas():
        assert is_valid_schema(schema) is jsonschema_verdict(schema), label
        seen += 1
    assert seen > 100


def test_the_bfcl_corpus_gets_the_same_verdict() -> None:
    # The benchmark's corpus (1,800+ third-party function documents), when its cache holds it.
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_tool_search as bfcl
    finally:
        sys.path.pop(0)
    wheel = bfcl.cache_dir() / bfcl.BFCL_WHEEL
    if not wheel.is_file():
        pytest.skip(f"no cached {bfcl.BFCL_WHEEL} (make bench downloads it)")
    functions, _ = bfcl.load_bfcl(wheel)
    for name, fn in functions.items():
        for schema in (fn.get("parameters") or {}, bfcl.to_schema(fn.get("parameters") or {})):
            if isinstance(schema, dict):
                assert is_valid_schema(schema) is jsonschema_verdict(schema), name


# --------------------------------------------------------------------------- the walks


def recursive_subschemas(node: Any, ptr: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The recursive walk ``subschemas`` replaced, verbatim."""
    if not isinstance(node, Mapping):
        return
    yield ptr, node
    for key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
        sub = node.get(key)
        if isinstance(sub, Mapping):
            for name, child in sub.items():
                yield from recursive_subschemas(
                    child, f"{ptr}/{key}/{str(name).replace('~', '~0').replace('/', '~1')}"
                )
    for key in (
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    ):
        child = node.get(key)
        if isinstance(child, Mapping):
            yield from recursive_subschemas(child, f"{ptr}/{key}")
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        seq = node.get(key)
        if isinstance(seq, list):
            for i, child in enumerate(seq):
                yield from recursive_subschemas(child, f"{ptr}/{key}/{i}")


def same_walk(schema: Any) -> None:
    fast = [(p, id(n)) for p, n in subschemas(schema)]
    slow = [(p, id(n)) for p, n in recursive_subschemas(schema)]
    assert fast == slow


@settings(max_examples=400, deadline=None)
@given(schemas)
def test_iterative_subschemas_walks_as_the_recursive_one(schema: Any) -> None:
    same_walk(schema)


def test_iterative_subschemas_on_real_schemas() -> None:
    for _, schema in real_schemas():
        same_walk(schema)


def test_iterative_subschemas_refuses_a_cycle() -> None:
    node: dict[str, Any] = {"type": "object"}
    node["items"] = node
    with pytest.raises(RecursionError):
        list(subschemas(node))


@settings(max_examples=400, deadline=None)
@given(object_schemas)
def test_reference_and_pattern_walks_find_nothing_without_their_keys(schema: dict[str, Any]) -> None:
    try:
        encoded = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):
        return  # check_tool_schema refuses it (RS001) before any walk
    if '"$' not in encoded:
        assert reference_problems(schema) == []
    if '"pattern' not in encoded:
        assert pattern_problems(schema) == []


@pytest.mark.parametrize(
    ("schema", "code"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "http://x/y"}}}, "RS004"),
        ({"type": "object", "$defs": {"a": {"$id": "x"}}}, "RS004"),
        ({"type": "object", "properties": {"a": {"pattern": "(a)\\1"}}}, "RS007"),
        ({"type": "object", "patternProperties": {"(?=x)": {}}}, "RS007"),
        ({"type": "object", "properties": {"a": {"minLength": -1}}}, "RS005"),
        ({"type": "object", "properties": {"a": {"type": "str"}}}, "RS005"),
    ],
)
def test_check_tool_schema_still_finds_each_kind(schema: dict[str, Any], code: str) -> None:
    assert code in {i.code for i in check_tool_schema(schema, phase_usable=True) if i.severity == "error"}


def test_registering_valid_schemas_does_not_import_jsonschema() -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from reyn_core import ToolDefinition\n"
        "from reyn_core.host import RegistryBuilder\n"
        "b = RegistryBuilder()\n"
        "b.register(ToolDefinition(name='t', description='d', handler=lambda **k: k, parameters="
        "{'type': 'object', 'properties': {'a': {'type': 'string', 'pattern': '^x', 'minLength': 1},"
        " 'b': {'$ref': '#/$defs/b'}}, '$defs': {'b': {'type': 'integer'}}}))\n"
        "b.freeze()\n"
        "print('jsonschema' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
