"""A tool's own ``available(ctx)`` that raises hides the tool (fail closed), and what it raised —
which may name host paths or carry a secret — never reaches a model: the refusal is fixed words,
``RT011`` and a reference into the operator's log, where the exception is written once per tool and
kind of failure per registry, not on every listing (the check runs on each). The record of kinds is
bounded. Controls: a check answering True / False behaves as before."""

from __future__ import annotations

from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition
from reyn_core.errors import ToolGateRefused
from reyn_core.host import RegistryBuilder, gates, invoke_tool, render_phase, render_router
from reyn_core.remote_log import FailureLog

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
SECRET = "sk-live-4f9a2c7e1b3d5a6f8e0c2b4d6f8a0c1e"


def echo(text: str = "") -> str:
    return text


def leaks(ctx: ToolContext) -> bool:
    raise RuntimeError(f"cannot read /home/op/.config/weather/key.txt: token {SECRET} rejected")


def registry_with(check: Any) -> Any:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(
            name="weather", description="Weather.", parameters=SCHEMA, handler=echo, available=check
        )
    )
    builder.register(ToolDefinition(name="steady", description="Steady.", parameters=SCHEMA, handler=echo))
    return builder.freeze()


def refusal(registry: Any, surface: str = "router") -> str:
    decision = gates.check(registry.get("weather"), surface, ToolContext(surface=surface), registry=registry)
    assert not decision.allowed and decision.layer == "call" and decision.rule == "available"
    return decision.reason


async def test_a_raising_check_shows_fixed_words_and_logs_the_exception_once(operator_log: Any) -> None:
    registry = registry_with(leaks)
    ctx = ToolContext(surface="router")
    for _ in range(50):  # every listing asks the check again
        assert [t["function"]["name"] for t in render_router(registry, ctx)] == ["steady"]
        assert registry.visible_names("router", ctx) == {"steady"}
    reason = refusal(registry)
    with pytest.raises(ToolGateRefused) as refused:
        await invoke_tool(registry, "weather", {"text": "x"}, ctx)
    for text in (reason, str(refused.value.to_envelope())):
        assert SECRET not in text and "key.txt" not in text and "RuntimeError" not in text
    assert "tool 'weather' is unavailable: its availability check failed (RT011)" in reason
    assert refused.value.message.endswith(reason.rsplit("; ", 1)[1])  # the same record, cited again
    record = operator_log.record(reason)
    assert SECRET in record and "RuntimeError" in record and "Traceback" in record
    assert operator_log.text().count(SECRET) == 1  # 100 listings, 1 check, 1 call: one record


def test_each_registry_logs_its_own_first_failure(operator_log: Any) -> None:
    first, second = registry_with(leaks), registry_with(leaks)
    refusal(first), refusal(first), refusal(second), refusal(second)
    assert operator_log.text().count(SECRET) == 2


def test_another_kind_of_failure_of_the_same_tool_is_logged_too(operator_log: Any) -> None:
    failures = iter([OSError("disk one"), OSError("disk one"), ValueError("bad unit"), OSError("disk two")])

    def flaky(ctx: ToolContext) -> bool:
        raise next(failures)

    registry = registry_with(flaky)
    reasons = [refusal(registry) for _ in range(4)]
    assert reasons[0] == reasons[1] and len(set(reasons)) == 3
    log = operator_log.text()
    assert (log.count("disk one"), log.count("bad unit"), log.count("disk two")) == (1, 1, 1)


def test_the_record_of_kinds_is_bounded(operator_log: Any) -> None:
    failures = FailureLog("test", keep=3)
    refs = [failures.log("t", "the check raised", ValueError(f"kind {i}")) for i in range(10)]
    assert len(set(refs)) == 10 and len(failures._refs) == 3
    # the three most recent answer from memory; the first, dropped, is logged again
    assert failures.log("t", "the check raised", ValueError("kind 9")) == refs[9]
    assert failures.log("t", "the check raised", ValueError("kind 0")) != refs[0]
    assert operator_log.text().count("ValueError: kind 0") == 2


def test_an_exception_whose_text_fails_is_still_contained(operator_log: Any) -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    def broken(ctx: ToolContext) -> bool:
        raise Unprintable

    registry = registry_with(broken)
    assert "(RT011)" in refusal(registry) and "(RT011)" in refusal(registry)
    assert operator_log.text().count(" ref=") == 1 and "str() failed" in operator_log.text()


@pytest.mark.parametrize("answer", [True, False])
def test_control_a_check_that_answers_behaves_as_before(operator_log: Any, answer: bool) -> None:
    registry = registry_with(lambda ctx: answer)
    ctx = ToolContext(surface="phase")
    ops = [op.kind for op in render_phase(registry, ctx, ["weather", "steady"]).ops]
    assert ops == (["steady", "weather"] if answer else ["steady"])
    decision = gates.check(
        registry.get("weather"), "router", ToolContext(surface="router"), registry=registry
    )
    assert decision.allowed is answer
    if not answer:
        assert decision.reason == "tool 'weather' is not available in this context"
    assert operator_log.text() == ""
