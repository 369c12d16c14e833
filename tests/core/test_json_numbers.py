"""Numbers JSON cannot carry (``NaN``, ``Infinity``, ``-Infinity``; RFC 8259 has none) never leave
through ``dispatch_tool`` and never come in (issue 24, task F): a result holding one fails that call
(``execution_error`` naming the JSON pointer, found by the same walk as a lone surrogate), and a
model's arguments text or phase reply holding one — or a literal beyond a float's range, which
``json.loads`` reads as Infinity — is refused with a specific problem. The controls: ordinary floats,
the largest float, ``-0.0`` and the string ``"NaN"`` pass, and every envelope is sent as strict JSON."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from reyn_core import ToolContext, tool
from reyn_core.host import (
    PhaseOutputError,
    RegistryBuilder,
    ToolRegistry,
    dispatch_tool,
    parse_phase_output,
    render_phase,
)

NAN, INF = float("nan"), float("inf")
FINE = [0.5, 1e308, 1.7976931348623157e308, 5e-324, -0.0, "NaN", "Infinity"]


def _sent(envelope: dict[str, Any]) -> str:
    """The envelope as strict JSON (RFC 8259): what a peer must accept. Raises on NaN/Infinity."""
    return json.dumps(envelope, ensure_ascii=False, allow_nan=False)


@tool(cluster="t", purity="read_only")
def measure(which: str) -> Any:
    """A measurement: not a number, infinite, nested, or ordinary numbers."""
    return {
        "nan": NAN,
        "inf": {"rows": [{"ok": 1.0}, {"mean": INF}]},
        "-inf": [1, 2, -INF],
        "key/~": {"a/b~": NAN},
        "fine": {"values": FINE},
    }[which]


@tool(cluster="t", purity="read_only")
def echo(value: Any = None) -> Any:
    """The value it was given."""
    return {"value": value}


@pytest.fixture
def registry() -> ToolRegistry:
    builder = RegistryBuilder()
    for t in (measure, echo):
        builder.register(t)
    return builder.freeze()


async def _dispatch(registry: ToolRegistry, name: str, args: Any) -> dict[str, Any]:
    return await dispatch_tool(registry, name, args, ToolContext(surface="router"))


@pytest.mark.parametrize(
    ("which", "where"),
    [("nan", "at the root"), ("inf", "at /rows/1/mean"), ("-inf", "at /2"), ("key/~", "at /a~1b~0")],
)
async def test_a_result_holding_a_non_finite_number_fails_that_call_naming_where(
    registry: ToolRegistry, which: str, where: str
) -> None:
    envelope = await _dispatch(registry, "measure", {"which": which})
    _sent(envelope)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "execution_error"
    message = envelope["error"]["message"]
    assert f"tool 'measure' returned a number that JSON cannot carry (NaN or Infinity) {where}" in message
    assert message.endswith("the result was not sent")


async def test_a_result_of_ordinary_and_extreme_finite_numbers_is_sent(registry: ToolRegistry) -> None:
    envelope = await _dispatch(registry, "measure", {"which": "fine"})
    assert envelope["status"] == "ok"
    sent = json.loads(_sent(envelope))["data"]["values"]
    assert sent == FINE and math.copysign(1.0, sent[4]) == -1.0  # -0.0 keeps its sign


@pytest.mark.parametrize(
    ("text", "literal", "why"),
    [
        ('{"value": NaN}', "NaN", "is not JSON (NaN, Infinity)"),
        ('{"value": [1, Infinity]}', "Infinity", "is not JSON (NaN, Infinity)"),
        ('{"value": {"x": -Infinity}}', "-Infinity", "is not JSON (NaN, Infinity)"),
        ('{"value": 1e400}', "1e400", "is beyond a 64-bit float's range"),
        ('{"value": -2.5E+999}', "-2.5E+999", "is beyond a 64-bit float's range"),
    ],
)
async def test_arguments_text_holding_a_number_json_cannot_carry_is_refused_naming_it(
    registry: ToolRegistry, text: str, literal: str, why: str
) -> None:
    envelope = await _dispatch(registry, "echo", text)
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "invalid_arguments"
    message = envelope["error"]["message"]
    assert f"arguments hold a number JSON cannot carry: {literal} {why}" in message
    assert message.endswith("send a number or null")


async def test_arguments_text_of_ordinary_and_extreme_finite_numbers_is_read(registry: ToolRegistry) -> None:
    text = '{"value": [0.5, 1e308, 1.7976931348623157e308, 5e-324, -0.0, "NaN", "Infinity", 1e-400]}'
    envelope = await _dispatch(registry, "echo", text)
    assert envelope["status"] == "ok"
    assert json.loads(_sent(envelope))["data"]["value"] == [*FINE, 0.0]


def _phase(build_registry: Any) -> Any:
    return render_phase(build_registry([]), ToolContext(surface="phase"), [])


@pytest.mark.parametrize(
    ("number", "why"),
    [
        ("NaN", "is not JSON (NaN, Infinity)"),
        ("Infinity", "is not JSON (NaN, Infinity)"),
        ("1e999", "is beyond"),
    ],
)
def test_a_phase_reply_holding_a_number_json_cannot_carry_is_refused(
    build_registry: Any, number: str, why: str
) -> None:
    reply = '{"control": {"type": "finish", "decision": "finish", "confidence": ' + number + "}}"
    with pytest.raises(PhaseOutputError, match="the reply holds a number JSON cannot carry") as info:
        parse_phase_output(reply, _phase(build_registry))
    assert f"{number} {why}" in str(info.value) and str(info.value).endswith("send a number or null")


def test_a_phase_reply_of_ordinary_and_extreme_finite_numbers_is_read(build_registry: Any) -> None:
    data = {"values": FINE}
    reply = json.dumps(
        {
            "control": {"type": "finish", "decision": "finish", "confidence": 0.5},
            "artifact": {"type": "m", "data": data},
        }
    )
    output = parse_phase_output(reply, _phase(build_registry))
    assert output.control.confidence == 0.5 and output.artifact is not None and output.artifact.data == data
