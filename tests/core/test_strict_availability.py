"""A tool's own ``available(ctx)`` is asked strictly (``reyn_core.own_check``): only ``True`` or
``False`` is an answer. A result whose truth its own ``__bool__`` decides (and which can raise with a
secret in the text), the coroutine of an ``async def`` check (always true if tested), or any other
object hides the tool as a failed check (``RT011``): the model sees fixed words, the operator's log
the raw repr or exception. An ``async def`` check is refused at registration (``RT006``). Any
``BaseException`` a check raises is contained the same way, but for the interruptions that must
propagate. Controls: a check answering True / False, and a plain callable object, behave as before."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition, tool
from reyn_core.errors import ToolRegistrationError
from reyn_core.host import RegistryBuilder, dispatch_tool, gates, render_phase, render_router

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
SECRET = "sk-live-7c1e9a3b5d2f4a6c8e0b1d3f5a7c9e1b"


def echo(text: str = "") -> str:
    return text


class Weird:
    def __bool__(self) -> bool:
        raise ValueError(f"cannot read /home/op/.secret/key: {SECRET}")


class Truthy:
    def __repr__(self) -> str:
        return f"Truthy({SECRET})"


class Interrupt(BaseException):
    pass


def registry_with(check: Any) -> Any:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="t", description="T.", parameters=SCHEMA, handler=echo, available=check)
    )
    builder.register(ToolDefinition(name="steady", description="S.", parameters=SCHEMA, handler=echo))
    return builder.freeze()


def model_sees(registry: Any, surface: str) -> str:
    ctx = ToolContext(surface=surface)
    if surface == "router":
        listed = [t["function"]["name"] for t in render_router(registry, ctx)]
    else:
        listed = [op.kind for op in render_phase(registry, ctx, ["t", "steady"]).ops]
    assert listed == ["steady"]  # the other tools still render
    calls = gates.check(registry.get("t"), surface, ctx, registry=registry, allowed_ops=["t", "steady"])
    reply = asyncio.run(dispatch_tool(registry, "t", {"text": "x"}, ctx, allowed_ops=["t", "steady"]))
    assert reply["status"] == "error" and reply["error"]["kind"] == "gate_refused"
    assert not calls.allowed and calls.rule == "available"
    return calls.reason + json.dumps(reply)


async def _never_awaited(ctx: ToolContext) -> bool:
    return False


@pytest.mark.parametrize(
    ("label", "check", "logged"),
    [
        ("__bool__ raises", lambda ctx: Weird(), "test_strict_availability.Weird <"),
        ("truthy object", lambda ctx: Truthy(), "Truthy("),
        ("a coroutine (async check wrapped in a lambda)", lambda ctx: _never_awaited(ctx), "coroutine"),
        ("1, not True", lambda ctx: 1, "builtins.int 1"),
        ("None", lambda ctx: None, "builtins.NoneType None"),
        ("a BaseException subclass", lambda ctx: (_ for _ in ()).throw(Interrupt(SECRET)), "Interrupt"),
    ],
)
def test_anything_but_a_bool_hides_the_tool_with_fixed_words(
    operator_log: Any, label: str, check: Any, logged: str
) -> None:
    registry = registry_with(check)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an unawaited coroutine is closed, not left
        for surface in ("router", "phase"):
            seen = model_sees(registry, surface)
            assert "its availability check failed (RT011)" in seen, label
            assert SECRET not in seen and "/home/op" not in seen and logged not in seen
        gc.collect()
    text = operator_log.text()
    assert logged in text and text.count(" ref=") == 1  # logged once, cited on every listing and call


def test_an_async_check_is_refused_at_registration() -> None:
    async def ready(ctx: ToolContext) -> bool:
        return False

    class AsyncCall:
        async def __call__(self, ctx: ToolContext) -> bool:
            return False

    for check in (ready, AsyncCall()):
        with pytest.raises(ToolRegistrationError) as refused:
            registry_with(check)
        assert refused.value.code == "RT006"
        assert "available must be a plain function returning True or False, not an async one" in str(
            refused.value
        )
    with pytest.raises(ToolRegistrationError, match="available must be callable or None, got int"):
        registry_with(3)
    # the decorator's definition is refused the same way when it is registered
    with pytest.raises(ToolRegistrationError, match="not an async one"):
        RegistryBuilder().register(tool(available=ready, description="Echo.")(echo))


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, GeneratorExit, asyncio.CancelledError])
def test_interruptions_propagate(interruption: type[BaseException]) -> None:
    def interrupted(ctx: ToolContext) -> bool:
        raise interruption()

    registry = registry_with(interrupted)
    with pytest.raises(interruption):
        gates.check(registry.get("t"), "router", ToolContext(surface="router"), registry=registry)


@pytest.mark.parametrize("answer", [True, False])
def test_control_bools_and_a_callable_object_answer(operator_log: Any, answer: bool) -> None:
    class Check:
        def __call__(self, ctx: ToolContext) -> bool:
            return answer

    for check in (lambda ctx: answer, Check()):
        registry = registry_with(check)
        ctx = ToolContext(surface="router")
        listed = [t["function"]["name"] for t in render_router(registry, ctx)]
        assert listed == (["steady", "t"] if answer else ["steady"])
        reply = asyncio.run(dispatch_tool(registry, "t", {"text": "x"}, ctx))
        assert (reply["status"] == "ok") is answer
    assert operator_log.text() == ""
