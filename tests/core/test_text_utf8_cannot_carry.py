"""Text UTF-8 cannot carry (a lone surrogate in a ``str``) never leaves through ``dispatch_tool``:
a result holding one fails that call (``execution_error`` naming the JSON pointer), an error's text
and a report's message show it as its escape, a log's data holding one is refused at ``ctx.log``, and a
definition holding one is ``RT012``. The controls: the same with ordinary non-ASCII text. Each
envelope is written as UTF-8 here, as every surface writes it (an MCP message, a model request)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition, ToolError, ToolRegistrationError, tool
from reyn_core.host import QueuedReporter, RegistryBuilder, ToolRegistry, ToolReport, dispatch_tool

LONE = b"caf\xe9".decode("utf-8", "surrogateescape")  # a file name that is not UTF-8
FINE = "café 😀"


def _sent(envelope: dict[str, Any]) -> bytes:
    """The envelope as a surface sends it: UTF-8 (raises UnicodeEncodeError on a lone surrogate)."""
    return json.dumps(envelope, ensure_ascii=False).encode("utf-8")


@tool(cluster="t", purity="read_only")
def named(lone: bool, nest: bool = False) -> Any:
    """A file name in the result: one UTF-8 cannot carry, or ordinary non-ASCII text."""
    name = LONE if lone else FINE
    return {"files": [{"ok": "x"}, {"name": name}]} if nest else name


@tool(cluster="t", purity="read_only")
def keyed(lone: bool) -> dict[str, int]:
    """The file name as a key of the result."""
    return {"fine": 1, LONE if lone else FINE: 2}


@tool(cluster="t", purity="read_only")
def missing(lone: bool) -> str:
    """Fail, naming the file."""
    raise ToolError(f"no such file: {LONE if lone else FINE}")


@tool(cluster="t", purity="read_only")
def crashes(lone: bool) -> str:
    """Raise an unexpected exception naming the file."""
    raise FileNotFoundError(f"no such file: {LONE if lone else FINE}")


@tool(cluster="t", purity="read_only")
async def reports(lone: bool, ctx: ToolContext) -> str:
    """Report progress and log, naming the file in the messages."""
    ctx.report_progress(1, 2, f"read {LONE if lone else FINE}")
    ctx.log("info", f"read {LONE if lone else FINE}")
    return "done"


@tool(cluster="t", purity="read_only")
def logs_data(lone: bool, ctx: ToolContext) -> str:
    """Log with the file name as data."""
    ctx.log("info", "read", name=LONE if lone else FINE)
    return "done"


@pytest.fixture
def registry() -> ToolRegistry:
    builder = RegistryBuilder()
    for t in (named, keyed, missing, crashes, refuses, reports, logs_data):
        builder.register(t)
    return builder.freeze()


async def _dispatch(registry: ToolRegistry, name: str, args: dict[str, Any], ctx: Any = None) -> Any:
    return await dispatch_tool(registry, name, args, ctx or ToolContext(surface="router"))


@pytest.mark.parametrize(
    ("tool_name", "args", "where"),
    [
        ("named", {}, "at the root"),
        ("named", {"nest": True}, "at /files/1/name"),
        ("keyed", {}, "in a key of the object at the root"),
    ],
)
async def test_a_result_utf8_cannot_carry_fails_that_call_naming_where(
    registry: ToolRegistry, tool_name: str, args: dict[str, Any], where: str
) -> None:
    envelope = await _dispatch(registry, tool_name, {"lone": True, **args})
    _sent(envelope)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "execution_error"
    message = envelope["error"]["message"]
    assert f"tool {tool_name!r} returned text that UTF-8 cannot carry (a lone surrogate) {where}" in message
    assert message.endswith("the result was not sent")
    control = await _dispatch(registry, tool_name, {"lone": False, **args})  # the next call, valid text
    assert control["status"] == "ok" and FINE in _sent(control).decode("utf-8")


@pytest.mark.parametrize("tool_name", ["missing", "crashes"])
async def test_an_error_text_utf8_cannot_carry_is_sent_with_its_escape(
    registry: ToolRegistry, tool_name: str
) -> None:
    envelope = await _dispatch(registry, tool_name, {"lone": True})
    _sent(envelope)
    assert envelope["error"]["message"].endswith("no such file: caf\\udce9")
    control = await _dispatch(registry, tool_name, {"lone": False})
    assert control["error"]["message"].endswith(f"no such file: {FINE}")


class Refused(ToolError):
    """A tool's own error kind, with a field of its own in the envelope."""

    kind = "refused"
    envelope_fields = ("detail",)

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


@tool(cluster="t", purity="read_only")
def refuses(lone: bool) -> str:
    """Refuse, naming the file in the message and in a field of the envelope."""
    name = LONE if lone else FINE
    raise Refused(f"refused {name}", detail=name)


async def test_an_error_envelopes_own_fields_are_sent_with_their_escape(registry: ToolRegistry) -> None:
    envelope = await _dispatch(registry, "refuses", {"lone": True})
    _sent(envelope)
    assert envelope["error"] == {"kind": "refused", "message": "refused caf\\udce9", "detail": "caf\\udce9"}
    control = await _dispatch(registry, "refuses", {"lone": False})
    assert control["error"] == {"kind": "refused", "message": f"refused {FINE}", "detail": FINE}


async def test_arguments_holding_one_never_reach_a_handler(registry: ToolRegistry) -> None:
    # the dispatcher refuses a lone surrogate anywhere in the arguments before any validator, naming
    # where (tests/core/test_arguments_json_data.py has the rest)
    envelope = await _dispatch(registry, "named", {"lone": True, "\ud800": 1})
    _sent(envelope)
    assert envelope["error"]["kind"] == "invalid_arguments"
    message = envelope["error"]["message"]
    assert "the arguments have a member name holding text UTF-8 cannot carry (a lone surrogate)" in message


async def test_report_messages_utf8_cannot_carry_are_delivered_with_their_escape(
    registry: ToolRegistry,
) -> None:
    heard: list[ToolReport] = []

    async def sink(event: ToolReport) -> None:
        heard.append(event)

    for lone in (True, False):
        reporter = QueuedReporter(sink, tool="reports")
        envelope = await _dispatch(registry, "reports", {"lone": lone}, ToolContext(reporter=reporter))
        await reporter.drain()
        assert envelope == {"status": "ok", "data": "done"}
    assert [e.message for e in heard] == [
        "read caf\\udce9",
        "read caf\\udce9",
        f"read {FINE}",
        f"read {FINE}",
    ]


async def test_log_data_utf8_cannot_carry_is_refused_at_the_log_call(registry: ToolRegistry) -> None:
    envelope = await _dispatch(registry, "logs_data", {"lone": True})
    _sent(envelope)
    assert envelope["error"]["kind"] == "execution_error"
    assert "data holds text UTF-8 cannot carry (a lone surrogate) at /name" in envelope["error"]["message"]
    assert (await _dispatch(registry, "logs_data", {"lone": False}))["status"] == "ok"


def _handler() -> str:
    return "x"


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("description", f"Read {LONE}.", "in its description at character 8"),
        (
            "parameters",
            {"type": "object", "properties": {"p": {"type": "string", "description": LONE}}},
            "in its parameters schema at /properties/p/description",
        ),
        ("returns", {"type": "string", "title": LONE}, "in its returns schema at /title"),
    ],
)
def test_a_definition_utf8_cannot_carry_is_rt012_and_alone(field: str, value: Any, where: str) -> None:
    fields: dict[str, Any] = {"description": "Read.", "parameters": {"type": "object"}, field: value}
    builder = RegistryBuilder()
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(ToolDefinition(name="bad", handler=_handler, cluster="t", **fields))
    assert info.value.code == "RT012"
    assert f"tool 'bad' has text that UTF-8 cannot carry (a lone surrogate) {where}" in str(info.value)
    # the control: the same fields with ordinary non-ASCII text register
    fine = json.loads(json.dumps(value).replace("\\udce9", "\\u00e9"))
    builder.register(ToolDefinition(name="good", handler=_handler, cluster="t", **{**fields, field: fine}))
    assert "good" in builder.freeze()


@pytest.mark.parametrize("lone", [True, False])
def test_an_enriched_schema_holding_a_lone_surrogate_renders_the_registered_one(
    lone: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # render-time text RT012 never saw: before, it reached the listing and broke its encoding
    from reyn_core.host import render_router

    def enrich(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        params["properties"]["name"]["enum"] = ["notes.md", LONE if lone else FINE]
        return params

    registered = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(
            name="pick", description="Pick a file.", parameters=registered, handler=lambda name: name
        )
    )
    builder.register(
        ToolDefinition(
            name="pick_enriched",
            description="Pick a file (enriched).",
            parameters=registered,
            handler=lambda name: name,
            schema_enricher=enrich,
        )
    )
    listing = render_router(builder.freeze(), ToolContext(surface="router"))
    _sent({"tools": listing})  # the whole listing can be written as UTF-8
    shown = {t["function"]["name"]: t["function"]["parameters"] for t in listing}
    assert set(shown) == {"pick", "pick_enriched"}
    enum = shown["pick_enriched"]["properties"]["name"].get("enum")
    if lone:
        assert enum is None  # the registered schema, as for an enricher that fails
        assert "returned text UTF-8 cannot carry (a lone surrogate) at /properties/name/enum/1" in caplog.text
    else:  # the control: ordinary non-ASCII text is rendered
        assert enum == ["notes.md", FINE]


OBJ = {"type": "object"}


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), float("nan")])
def test_a_definition_holding_a_number_json_cannot_carry_is_rt012_and_alone(bad: float) -> None:
    # before, it registered, and every model request carrying the listing failed (httpx refuses it)
    def measure(x: float = bad) -> float:
        """Measure."""
        return x

    builder = RegistryBuilder()
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(tool(cluster="t", purity="read_only")(measure))
    assert info.value.code == "RT012"
    assert (
        "tool 'measure' has a number JSON cannot carry (NaN or Infinity) in its parameters schema "
        "at /properties/x/default" in str(info.value)
    )
    returns = {"type": "number", "maximum": bad}
    with pytest.raises(ToolRegistrationError, match="in its returns schema at /maximum"):
        builder.register(
            ToolDefinition(
                name="bounded", description="B.", parameters=OBJ, handler=_handler, returns=returns
            )
        )

    # the control: finite numbers (the largest float included) register, and the listing is JSON
    def measure_fine(x: float = 1.7976931348623157e308) -> float:
        """Measure."""
        return x

    builder.register(tool(cluster="t", purity="read_only")(measure_fine))
    builder.register(
        ToolDefinition(
            name="bounded", description="B.", parameters=OBJ, handler=_handler, returns={"maximum": -0.0}
        )
    )
    registry = builder.freeze()
    assert {d.name for d in registry.tools()} == {"measure_fine", "bounded"}
    json.dumps([(d.parameters, d.returns) for d in registry.tools()], allow_nan=False)
