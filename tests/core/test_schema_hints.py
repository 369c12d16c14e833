"""Registration diagnostics that say what was meant: a misspelt type (RS005) names the type, a
misspelt keyword (RS103, a warning: JSON Schema would silently ignore it) names the keyword."""

from __future__ import annotations

from typing import Any

import pytest

from reyn_core import ToolDefinition, ToolRegistrationError
from reyn_core.host import RegistryBuilder
from reyn_core.schema import check_tool_schema


def obj(props: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **extra}


def issues(schema: dict[str, Any], code: str) -> list[tuple[str, str]]:
    return [(i.pointer, i.message) for i in check_tool_schema(schema, phase_usable=True) if i.code == code]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("strng", "string"),
        ("String", "string"),
        ("str", "string"),
        ("int", "integer"),
        ("intger", "integer"),
        ("float", "number"),
        ("bool", "boolean"),
        ("dict", "object"),
        ("list", "array"),
        ("nul", "null"),
        ("None", "null"),
    ],
)
def test_a_misspelt_type_suggests_the_type(written, meant):
    ((pointer, message),) = issues(obj({"a": {"type": written}}), "RS005")
    assert pointer == "/properties/a/type"
    assert f"{written!r} (did you mean {meant!r}?) is not a JSON Schema type" in message
    assert "the types are array, boolean, integer, null, number, object, string" in message


def test_a_misspelt_type_in_a_type_list_and_deep_inside_is_found():
    schema = obj({"a": {"type": "array", "items": {"type": ["integer", "nul"]}}})
    ((pointer, message),) = issues(schema, "RS005")
    assert pointer == "/properties/a/items/type"
    assert "'nul' (did you mean 'null'?) is not a JSON Schema type" in message
    assert "'integer'" not in message.split(";")[0]  # only the wrong name is named


def test_a_type_nothing_resembles_lists_the_types_without_guessing():
    ((_, message),) = issues(obj({"a": {"type": "zebra"}}), "RS005")
    assert "'zebra' is not a JSON Schema type; the types are" in message
    assert "did you mean" not in message
    ((_, message),) = issues(obj({"a": {"type": 5}}), "RS005")
    assert "5 is not a JSON Schema type" in message


def test_other_meta_schema_problems_say_what_was_expected():
    assert issues(obj({"a": {"type": "string", "minLength": "3"}}), "RS005") == [
        ("/properties/a/minLength", "not a valid JSON Schema 2020-12: expected integer, got string")
    ]
    assert issues(obj({}, required="a"), "RS005") == [
        ("/required", "not a valid JSON Schema 2020-12: expected array, got string")
    ]


def test_registration_refuses_the_tool_with_the_hint():
    registry = RegistryBuilder()
    with pytest.raises(ToolRegistrationError) as info:
        registry.register(
            ToolDefinition(
                name="t", description="T.", parameters=obj({"a": {"type": "strng"}}), handler=lambda **kw: kw
            )
        )
    assert "did you mean 'string'?" in str(info.value)


@pytest.mark.parametrize(
    ("schema", "pointer", "meant"),
    [
        (obj({"a": {"type": "string", "maxLenght": 3}}), "/properties/a/maxLenght", "maxLength"),
        (obj({"a": {"type": "integer", "minimun": 1}}), "/properties/a/minimun", "minimum"),
        ({"type": "object", "propertes": {"a": {}}}, "/propertes", "properties"),
        (obj({"a": {"type": "string"}}, Required=["a"]), "/Required", "required"),
        (
            obj({"a": {"type": "string"}}, additionalProperty=False),
            "/additionalProperty",
            "additionalProperties",
        ),
        (
            obj({"a": {"anyOf": [{"type": "string", "patern": "^a"}]}}),
            "/properties/a/anyOf/0/patern",
            "pattern",
        ),
        (obj({"a": {"type": "string", "example": "x"}}), "/properties/a/example", "examples"),
    ],
)
def test_a_misspelt_keyword_is_a_warning_naming_the_keyword(schema, pointer, meant):
    found = check_tool_schema(schema, phase_usable=True)
    assert not any(i.severity == "error" for i in found)  # the tool still registers
    rs103 = [i for i in found if i.code == "RS103"]
    assert [(i.pointer, i.severity) for i in rs103] == [(pointer, "warning")]
    assert f"(did you mean {meant!r}?)" in rs103[0].message
    assert "ignores unknown keywords" in rs103[0].message


def test_extension_keywords_and_known_keywords_pass_quietly():
    schema = obj(
        {
            "a": {
                "type": "string",
                "x-internal": True,
                "format": "date",
                "deprecated": True,
                "examples": ["x"],
            }
        },
        required=["a"],
        additionalProperties=False,
    )
    assert [i for i in check_tool_schema(schema, phase_usable=True) if i.code == "RS103"] == []
    # Property *names* are not keywords: a property called "maxLenght" is fine.
    assert issues(obj({"maxLenght": {"type": "integer"}}), "RS103") == []
