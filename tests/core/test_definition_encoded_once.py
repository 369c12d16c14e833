"""A definition's schemas are encoded once at registration: ``RT012`` (a lone surrogate, a ``NaN`` or
``Infinity``) is found from the text the schema checks make anyway (``json_text_unsendable_at``), the
walk naming where run only when that text could hold one. The property holds the shortcut to the
walk's own answer; the count holds the one encoding (before, each schema was encoded twice: once for
the size bound, once more for ``RT012``)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reyn_core import ToolDefinition, ToolRegistrationError
from reyn_core.host import RegistryBuilder
from reyn_core.unicode_text import unsendable_at

_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),  # ordinary text: ASCII, accents, emoji (a surrogate pair's escapes)
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates
        st.sampled_from(["\\", "u", "d", "N", "a", "I", "n", "f", "i", "t", "y"]),  # look-alike text
    ),
    max_size=8,
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_the_one_encoding_answers_as_the_walk_does(value: Any) -> None:
    from reyn_core.unicode_text import json_text_unsendable_at

    text, found = json_text_unsendable_at(value)
    assert text == json.dumps(value)
    assert found == unsendable_at(value)


def _encoded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every object ``json.dumps`` encodes from now on, wherever reyn_core calls it (the registry
    checks a copy of a definition's schemas: they are counted by equality)."""
    encoded: list[Any] = []
    real = json.dumps

    def dumps(obj: Any, *args: Any, **kwargs: Any) -> str:
        encoded.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(json, "dumps", dumps)
    return encoded


def _definition(parameters: dict[str, Any], returns: dict[str, Any]) -> ToolDefinition:
    return ToolDefinition(
        name="measure",
        description="Measure a length.",
        parameters=parameters,
        returns=returns,
        handler=lambda **kw: 0.0,
        cluster="t",
    )


def test_registration_encodes_each_schema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parameters = {"type": "object", "properties": {"x": {"type": "number", "description": "in 😀"}}}
    returns = {"type": "number", "maximum": 1e308}
    encoded = _encoded(monkeypatch)
    builder = RegistryBuilder()
    builder.register(_definition(parameters, returns))
    assert "measure" in builder.freeze()  # the control: an emoji and a finite extreme register
    assert sum(obj == parameters for obj in encoded) == 1
    assert sum(obj == returns for obj in encoded) == 1


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ("parameters", "in its parameters schema at /properties/x/maximum"),
        ("returns", "in its returns schema at /maximum"),
    ],
)
def test_a_schema_refused_from_that_one_encoding_still_names_where(field: str, where: str) -> None:
    parameters = {"type": "object", "properties": {"x": {"type": "number"}}}
    returns = {"type": "number"}
    bad = {"type": "number", "maximum": math.inf}
    if field == "parameters":
        parameters["properties"]["x"] = bad
    else:
        returns = bad
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(_definition(parameters, returns))
    assert info.value.code == "RT012"
    assert f"tool 'measure' has a number JSON cannot carry (NaN or Infinity) {where}" in str(info.value)
