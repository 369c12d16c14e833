"""One JSON-Schema validator factory (the package reyn_core.validation; the validator library only in
its ``compiled`` module, and its meta-schema check in ``screening``): no other module of the core, the
packs or the example plugin builds a JSON-Schema validator or a reference registry, and no schema,
however it names a URL, makes Reyn contact a server (a real HTTP server on 127.0.0.1 records every
request)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hostile_schemas import hostile_references, obj

import reyn_core
from reyn_core import SchemaRefused, ToolDefinition, ToolRegistrationError, json_schema_validator
from reyn_core.host import RegistryBuilder
from reyn_core.validation import SchemaNotCompiled, compile_validator

ROOT = Path(__file__).resolve().parents[2]
# the one module of the validation package that builds a validator, and the one asking the meta-schema
FACTORY = ROOT / "reyn_core" / "validation" / "compiled.py"
META = ROOT / "reyn_core" / "validation" / "screening.py"
SCANNED = [ROOT / "reyn_core", ROOT / "reyn_builtin_tools", ROOT / "reyn_plugin_example"]
FORBIDDEN = {
    "a jsonschema validator class": re.compile(r"\bDraft\d+Validator\b"),
    "validator_for": re.compile(r"\bvalidator_for\b"),
    "jsonschema.validate(": re.compile(r"\bjsonschema\s*\.\s*validate\s*\("),
    ".check_schema(": re.compile(r"\.\s*check_schema\s*\("),
    "validators.create/extend": re.compile(
        r"\bvalidators\s*\.\s*(create|extend)\b|\bfrom\s+jsonschema\.validators\b"
    ),
    "referencing.Registry(": re.compile(r"(?<![\w.])Registry\s*\(|\breferencing\s*\.\s*Registry\b"),
    "an import of jsonschema, jsonschema_rs or referencing": re.compile(
        r"^\s*(import|from)\s+(jsonschema|jsonschema_rs|referencing)\b"
        r"|import_module\(\s*['\"](jsonschema|referencing)"
        r"|__import__\(\s*['\"](jsonschema|referencing)",
        re.MULTILINE,
    ),
}


def sources() -> list[Path]:
    files: list[Path] = []
    for top in SCANNED:
        for path in top.rglob("*.py"):
            parts = set(path.relative_to(ROOT).parts)
            if parts & {"build", ".venv", "__pycache__", "tests"}:
                continue
            files.append(path)
    return sorted(files)


def test_the_scan_sees_the_packs_and_the_factory_itself() -> None:
    files = sources()
    names = {p.relative_to(ROOT).as_posix() for p in files}
    assert "reyn_builtin_tools/mcp/reyn_tools_mcp/tools.py" in names
    assert "reyn_builtin_tools/catalog/reyn_tools_catalog/catalog.py" in names
    assert "reyn_plugin_example/reyn_example/plugin.py" in names
    factory = FACTORY.read_text()
    # the patterns do find constructions: the factory's own
    assert FORBIDDEN["an import of jsonschema, jsonschema_rs or referencing"].search(factory)
    assert FORBIDDEN["a jsonschema validator class"].search(factory)


def test_no_jsonschema_validator_is_built_outside_the_factory() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}: {what}"
        for path in sources()
        if path != FACTORY
        for text in [path.read_text(encoding="utf-8")]
        for what, pattern in FORBIDDEN.items()
        if not (path == META and what.startswith("an import"))
        for m in pattern.finditer(text)
    ]
    assert found == [], "build JSON-Schema validators with reyn_core.json_schema_validator:\n" + "\n".join(
        found
    )


def test_the_factory_is_public() -> None:
    assert "json_schema_validator" in reyn_core.__all__ and "SchemaRefused" in reyn_core.__all__


# --------------------------------------------------------------------------- remote references


def variants() -> list[str]:
    return list(hostile_references("http://x"))


@pytest.mark.parametrize("variant", variants())
def test_registration_refuses_every_retrievable_reference(variant: str, counting_server: Any) -> None:
    schema, named = hostile_references(counting_server.url)[variant]
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    assert info.value.code == "RS004" and named in info.value.message
    assert counting_server.requests == []


@pytest.mark.parametrize("variant", variants())
def test_the_factory_refuses_every_retrievable_reference(variant: str, counting_server: Any) -> None:
    schema, named = hostile_references(counting_server.url)[variant]
    with pytest.raises(SchemaRefused) as info:
        json_schema_validator(schema)
    assert named in str(info.value)
    assert [p.kind for p in info.value.problems][:1] == ["reference"]
    assert counting_server.requests == []


@pytest.mark.parametrize("variant", variants())
def test_a_validator_forced_past_screening_still_fetches_nothing(variant: str, counting_server: Any) -> None:
    schema, _ = hostile_references(counting_server.url)[variant]
    try:
        validate = compile_validator(schema)
    except SchemaNotCompiled:  # refused when compiled (a reference it would have to retrieve)
        validate = None
    for value in ({"a": 1}, {"a": "x"}, {}):
        if validate is not None:
            validate(value)  # a problem or a pass; never a request
    assert counting_server.requests == []


def test_local_defs_work_under_a_remote_looking_root_id(counting_server: Any) -> None:
    schema = {
        "$id": f"{counting_server.url}/s.json",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **obj({"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#"}}, required=["a"]),
        "$defs": {"n": {"type": "integer"}},
    }
    RegistryBuilder().register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    validate = json_schema_validator(schema)
    assert validate({"a": 1, "b": {"a": 2}}) == []
    assert [p.pointer for p in validate({"a": "x", "b": {"a": "y"}})] == ["/a", "/b/a"]
    assert counting_server.requests == []


@pytest.mark.parametrize(
    "dialect", ["http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"]
)
def test_a_known_dialect_uri_is_accepted_and_validated_as_2020_12(dialect: str) -> None:
    schema = {"$schema": dialect, **obj({"a": {"type": "string", "pattern": "^(a+)+$"}})}
    assert json_schema_validator(schema)({"a": "a" * 40 + "!"})  # RE2 keywords kept despite $schema


def test_the_core_meta_schema_check_goes_through_the_factory() -> None:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(
            ToolDefinition(
                name="t", description="x", parameters=obj({"a": {"type": "nonsense"}}), handler=len
            )
        )
    assert info.value.code == "RS005"
    with pytest.raises(SchemaRefused) as refused:
        json_schema_validator(obj({"a": {"type": "nonsense"}}))
    assert (
        refused.value.problems[0].kind == "metaschema"
        and refused.value.problems[0].pointer == "/properties/a/type"
    )
