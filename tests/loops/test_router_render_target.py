"""``RouterLoop`` renders its tools for its model's provider (issue 28): a Gemini model gets the
Gemini adaptation, any other model the schema as registered."""

from __future__ import annotations

import enum

from reyn_core import tool
from reyn_core.host import RegistryBuilder
from reyn_loops import RouterLoop


class Finish(enum.Enum):
    matte = "matte"
    gloss = "gloss"


@tool(purity="read_only")
def paint(finish: Finish) -> str:
    """Paint."""
    return finish.value


def _registry():
    builder = RegistryBuilder()
    builder.register(paint)
    return builder.freeze()


def test_a_gemini_model_is_sent_inlined_references():
    (entry,) = RouterLoop(_registry(), model="gemini/gemini-2.0-flash").tools()
    params = entry["function"]["parameters"]
    assert params["properties"]["finish"] == {"enum": ["matte", "gloss"], "type": "string"}
    assert "$defs" not in params


def test_an_openai_model_is_sent_the_schema_as_registered():
    (entry,) = RouterLoop(_registry(), model="openai/gpt-4o-mini").tools()
    params = entry["function"]["parameters"]
    assert params["properties"]["finish"] == {"$ref": "#/$defs/Finish"} and "$defs" in params
