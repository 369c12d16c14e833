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


# A host's own types: the call's copy holds JSON's types only (review of task H). Before, the walk
# looked into dicts, lists and tuples and at str and float leaves only, so a value of another type
# reached the handler unexamined — a Decimal('NaN') or an object whose __float__ is NaN, converted
# by pydantic's float after the check; a set or a model instance holding NaN; a str subclass whose
# own isascii() said it was ASCII — and an int key passed.


class Lying(str):
    """A str subclass whose own methods say it is ASCII and encodes cleanly."""

    def isascii(self) -> bool:
        return True

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        return b"fine"


class Floaty:
    def __float__(self) -> float:
        return NAN


class Model:
    def __init__(self, y: float) -> None:
        self.y = y


NOT_JSON = "is not JSON data"
OTHER_TYPES = [
    ("scale", {"x": __import__("decimal").Decimal("NaN")}, "/x", NOT_JSON + " (a Decimal)"),
    ("scale", {"x": Floaty()}, "/x", NOT_JSON + " (a Floaty)"),
    ("keep", {"value": {NAN}}, "/value", NOT_JSON + " (a set)"),
    ("keep", {"value": [b"bytes"]}, "/value/0", NOT_JSON + " (a bytes)"),
    ("keep", {"value": {"m": Model(NAN)}}, "/value/m", NOT_JSON + " (a Model)"),
    ("raw", {"rows": [1.0, frozenset({"\ud800"})]}, "/rows/1", NOT_JSON + " (a frozenset)"),
    ("keep", {"value": {1: 2}}, "/value", "has a member name that is not a string (a int)"),
    ("keep", {"value": {("\ud800",): 1}}, "/value", "has a member name that is not a string (a tuple)"),
    ("scale", {"x": 1.0, "label": Lying("a\ud800")}, "/label", TEXT),
    ("keep", {"value": [Lying("\ud800")]}, "/value/0", TEXT),
]


@pytest.mark.parametrize(("name", "args", "pointer", "words"), OTHER_TYPES)
async def test_a_value_of_a_type_json_has_not_is_refused_naming_where(
    registry: ToolRegistry, name: str, args: dict[str, Any], pointer: str, words: str
) -> None:
    envelope = await dispatch_tool(registry, name, args, ToolContext(surface="router"))
    assert envelope["error"]["kind"] == "invalid_arguments", envelope
    assert envelope["error"]["errors"][0]["path"] == pointer
    assert words in envelope["error"]["errors"][0]["message"]
    assert RAN == []
    served = await dispatch_tool(registry, "scale", {"x": 2.5}, ToolContext(surface="router"))
    assert served == {"status": "ok", "data": {"x": 2.5, "label": ""}}


async def test_subclasses_of_json_types_reach_the_handler_as_their_base_values(
    registry: ToolRegistry,
) -> None:
    # the controls: an IntEnum, a str subclass, a float subclass and a tuple are JSON data, handed
    # over as JSON's own types (the base type's value, a list), whatever their own methods say
    import enum

    class Level(enum.IntEnum):
        HIGH = 3

    class Meters(float):
        def __repr__(self) -> str:
            return "lying"

    ctx = ToolContext(surface="router")
    value = {
        "level": Level.HIGH,
        "name": Name("café"),
        "m": Meters(2.5),
        "pair": (1, "a"),
        Name("k"): [Name("v")],
    }
    assert await invoke_tool(registry, "keep", {"value": value}, ctx) == "kept"
    held = RAN[-1]
    assert held == {"level": 3, "name": "café", "m": 2.5, "pair": [1, "a"], "k": ["v"]}
    assert [type(held[k]) for k in ("level", "name", "m", "pair")] == [int, str, float, list]
    assert type(next(iter(held["k"]))) is str and all(type(k) is str for k in held)


async def test_shared_containers_cost_no_more_than_the_value_bound(registry: ToolRegistry) -> None:
    # a list holding itself twice, n times over: n + 1 lists for the host, 2**n values as JSON. The
    # copy counts what it copies and stops at the bound (before, it copied all 2**n first)
    shared: Any = [1.0]
    for _ in range(40):
        shared = [shared, shared]
    envelope = await dispatch_tool(registry, "keep", {"value": shared}, ToolContext(surface="router"))
    assert envelope["error"]["kind"] == "invalid_arguments" and "values" in envelope["error"]["message"]
    assert RAN == []
    small: Any = [1.0]
    for _ in range(4):  # the control: 31 values
        small = [small, small]
    assert await invoke_tool(registry, "keep", {"value": small}, ToolContext(surface="router")) == "kept"
