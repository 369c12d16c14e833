"""A schema can never make Reyn fetch a remote or file ``$ref``: refused at registration, and a
validator forced to compile one makes no request (a real server on 127.0.0.1 counts them)."""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest

from reyn_core import ToolDefinition, ToolRegistrationError
from reyn_core.host import RegistryBuilder
from reyn_core.validation import SchemaNotCompiled, compile_validator


def schema_with_ref(ref: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"$ref": ref}}, "required": ["a"]}


def register(schema: dict[str, Any]) -> ToolRegistrationError:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(ToolDefinition(name="t", description="x", parameters=schema, handler=len))
    return info.value


def test_the_counting_server_really_counts(counting_server: Any) -> None:
    with urllib.request.urlopen(f"{counting_server.url}/probe", timeout=5) as response:
        assert response.status == 200
    assert counting_server.requests == ["/probe"]


def test_http_ref_to_a_local_server_is_refused_at_registration(counting_server: Any) -> None:
    error = register(schema_with_ref(f"{counting_server.url}/x"))
    assert error.code == "RS004"
    assert counting_server.requests == []


def test_file_ref_is_refused_at_registration() -> None:
    error = register(schema_with_ref("file:///etc/passwd"))
    assert error.code == "RS004" and "file:///etc/passwd" in error.message


def test_forced_http_ref_validator_makes_no_request(counting_server: Any) -> None:
    with pytest.raises(SchemaNotCompiled, match="refused to retrieve"):
        compile_validator(schema_with_ref(f"{counting_server.url}/x"))
    assert counting_server.requests == []


def test_forced_file_ref_validator_reads_nothing() -> None:
    with pytest.raises(SchemaNotCompiled, match="file:///etc/passwd"):
        compile_validator(schema_with_ref("file:///etc/passwd"))


def test_forced_relative_ref_against_a_remote_id_makes_no_request(counting_server: Any) -> None:
    schema = {"$id": f"{counting_server.url}/root.json", **schema_with_ref("other.json")}
    with pytest.raises(SchemaNotCompiled):
        compile_validator(schema)
    assert counting_server.requests == []


def test_forced_remote_meta_schema_makes_no_request(counting_server: Any) -> None:
    schema = {
        "$schema": f"{counting_server.url}/meta",
        "type": "object",
        "properties": {"a": {"type": "integer", "format": "int32"}},
    }
    assert compile_validator(schema)({"a": 1}) == []
    assert compile_validator(schema)({"a": "x"})
    assert counting_server.requests == []


def test_forced_dangling_local_ref_is_refused_when_compiled() -> None:
    with pytest.raises(SchemaNotCompiled, match="does not exist"):
        compile_validator(schema_with_ref("#/$defs/missing"))
