"""Every argument value a handler gets is JSON data (issue 24, task H): arguments given as a ``dict``
(a Python host's ``invoke_tool`` / ``dispatch_tool``; what an MCP client's request became) holding a
float that is not finite (``NaN``, ``Infinity``: RFC 8259 has neither) or a string or member name
holding a lone surrogate (no UTF-8 text holds one) are ``invalid_arguments`` naming the JSON
pointer, and the handler never runs — a small flat call (checked on the event loop) and a large or
nested one (checked in the worker thread) alike, for a model tool and a raw-schema tool. Before,
pydantic's ``float`` and a raw schema's unconstrained array items took ``NaN`` and the handler got
it (a raw ``number`` refused it as "expected number, got null"). The controls:
finite floats at the extremes, ``-0.0``, ordinary non-ASCII text and the string ``"NaN"`` reach the
handler as they were sent, and the next call is served."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core import InvalidToolArguments, ToolContext, ToolDefinition, tool
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, invoke_tool
from reyn_core.unicode_text import unsendable_at

NAN, INF = float("nan"), float("inf")
LONE = b"caf\xe9".decode("utf-8", "surrogateescape")  # a file name that is not UTF-8
LONG = "x" * 5000  # past the small call's string bound: validated in a worker thread
RAN: list[Any] = []


class Name(str):
    """A host's own ``str`` subclass, as a member name."""


@tool(cluster="t", purity="read_only")
def scale(x: float, label: str = "") -> dict[str, Any]:
    """A number and a label (a model tool: pydantic's float takes NaN)."""
    RAN.append((x, label))
    return {"x": x, "label": label}


@tool(cluster="t", purity="read_only")
def keep(value: Any = None, note: str = "") -> str:
    """Any value (a model tool)."""
    RAN.append(value)
    return "kept"


def _raw(**kwargs: Any) -> str:
    RAN.append(kwargs)
    return "kept"


RAW = ToolDefinition(
    name="raw",
    description="A raw-schema tool: its array's items are unconstrained.",
    parameters={"type": "object", "properties": {"x": {"type": "number"}, "rows": {"type": "array"}}},
    handler=_raw,
)


@pytest.fixture
def registry() -> ToolRegistry:
    RAN.clear()
    builder = RegistryBuilder()
    for t in (scale, keep, RAW):
        builder.register(t)
    return builder.freeze()


NUMBER = "holds a number JSON cannot carry (NaN or Infinity); send a number or null"
TEXT = "holds text UTF-8 cannot carry (a lone surrogate); send valid Unicode text"
KEY = "has a member name holding text UTF-8 cannot carry (a lone surrogate); send valid Unicode text"

REFUSED = [
    # (tool, arguments, pointer, words): small flat calls first, then nested or long ones
    ("scale", {"x": NAN}, "/x", NUMBER),
    ("scale", {"x": INF}, "/x", NUMBER),
    ("scale", {"x": -INF, "label": "a"}, "/x", NUMBER),
    ("raw", {"x": NAN}, "/x", NUMBER),
    ("scale", {"x": 1.0, "label": LONE}, "/label", TEXT),
    ("scale", {"x": 1.0, "label": "\ud800"}, "/label", TEXT),
    ("keep", {"value": 1, LONE: 2}, "", "the arguments have a member name"),
    ("keep", {"value": 1, Name(LONE): 2}, "", "the arguments have a member name"),
    ("keep", {"value": {"rows": [{"ok": 1.0}, {"mean": INF}]}}, "/value/rows/1/mean", NUMBER),
    ("raw", {"rows": [1, 2, NAN]}, "/rows/2", NUMBER),
    ("keep", {"value": ["fine", LONE]}, "/value/1", TEXT),
    ("keep", {"value": {"a/b~": {LONE: 1}}}, "/value/a~1b~0", KEY),
    ("keep", {"value": LONG, "note": LONE}, "/note", TEXT),
    ("keep", {"value": LONG + LONE}, "/value", TEXT),
]


@pytest.mark.parametrize(("name", "args", "pointer", "words"), REFUSED)
async def test_a_dict_argument_that_is_not_json_data_is_refused_naming_where(
    registry: ToolRegistry, name: str, args: dict[str, Any], pointer: str, words: str
) -> None:
    with pytest.raises(InvalidToolArguments) as refused:
        await invoke_tool(registry, name, args, ToolContext(surface="router"))
    assert RAN == []  # the handler never ran
    (problem,) = refused.value.problems
    assert problem.pointer == pointer and words in problem.message
    envelope = await dispatch_tool(registry, name, args, ToolContext(surface="router"))
    json.dumps(envelope, ensure_ascii=False, allow_nan=False).encode("utf-8")  # sendable as it is
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert envelope["error"]["errors"][0]["path"] == pointer
    assert RAN == []
    served = await dispatch_tool(registry, "scale", {"x": 2.5}, ToolContext(surface="router"))
    assert served == {"status": "ok", "data": {"x": 2.5, "label": ""}}


FINITE = [0.5, 1e308, 1.7976931348623157e308, 5e-324, -0.0, -1e308, 0.0]
TEXTS = ["café 😀", "NaN", "Infinity", "\u2028", ""]


@pytest.mark.parametrize("x", FINITE)
async def test_finite_floats_reach_the_handler_as_sent(registry: ToolRegistry, x: float) -> None:
    assert await invoke_tool(registry, "scale", {"x": x}, ToolContext(surface="router")) == {
        "x": x,
        "label": "",
    }
    assert await invoke_tool(registry, "raw", {"x": x, "rows": [x]}, ToolContext(surface="router")) == "kept"
    assert RAN[-1] == {"x": x, "rows": [x]}


async def test_ordinary_text_and_finite_numbers_anywhere_reach_the_handler(registry: ToolRegistry) -> None:
    ctx = ToolContext(surface="router")
    for text in TEXTS:
        assert await invoke_tool(registry, "scale", {"x": 1.5, "label": text}, ctx) == {
            "x": 1.5,
            "label": text,
        }
    nested = {"rows": [{"mean": m, "name": t} for m, t in zip(FINITE, TEXTS, strict=False)], "café": "😀"}
    assert await invoke_tool(registry, "keep", {"value": nested}, ctx) == "kept"
    assert RAN[-1] == nested
    assert await invoke_tool(registry, "keep", {"value": LONG, "note": "é"}, ctx) == "kept"
    assert await invoke_tool(registry, "keep", {"value": {Name("café"): 2}}, ctx) == "kept"


async def test_arguments_text_holding_a_lone_surrogate_escape_is_refused_naming_where(
    registry: ToolRegistry,
) -> None:
    # the same one step for JSON text: "\\ud800" is valid JSON grammar, but no UTF-8 text holds it
    envelope = await dispatch_tool(
        registry, "scale", '{"x": 1, "label": "\\ud800"}', ToolContext(surface="router")
    )
    assert envelope["error"]["kind"] == "invalid_arguments" and RAN == []
    assert envelope["error"]["errors"] == [{"path": "/label", "message": TEXT}]
    paired = await dispatch_tool(
        registry, "scale", '{"x": 1, "label": "\\ud83d\\ude00"}', ToolContext(surface="router")
    )
    assert paired == {"status": "ok", "data": {"x": 1.0, "label": "😀"}}


def test_the_walk_reads_a_member_name_of_any_type_as_str() -> None:
    # a str subclass (or any key a host's dict holds) is read as its str, as the pointer names it
    assert unsendable_at({Name(LONE): 1}) == ("", "key")
    assert unsendable_at({"a": {Name("\udc80"): [1]}}) == ("/a", "key")
    assert unsendable_at({Name("café"): 1.0, 7: "x", None: [0.5]}) is None
