"""Validation cost by construction (issue 23): the size of a call is bounded before any schema work,
patterns compile to bounded automata when the tool is registered, the answer to an invalid call is
capped (the first problems and a count), and a large call is validated off the event loop.
Asserted on counts and sizes only; the timings are in benchmarks/."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition, ToolRegistrationError
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool
from reyn_core.validation import (
    MAX_ARGUMENT_CHARS,
    MAX_ARGUMENT_DEPTH,
    MAX_ARGUMENT_ITEMS,
    MAX_ARGUMENT_PROPERTIES,
    json_schema_validator,
    size_problems,
)
from reyn_core.validation.messages import MAX_PROBLEMS

CTX = ToolContext(surface="router")
READ_FILE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "max_bytes": {"type": "integer", "minimum": 1}},
    "required": ["path"],
    "additionalProperties": False,
}
# Valid, but costly for an automaton: a lazy DFA for it needs 2**21 states, so the engine falls back
# to its linear-time NFA on every value.
COSTLY = "^(?:a|b)*a(?:a|b){20}$"


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def registry_of(name: str, schema: dict[str, Any]) -> ToolRegistry:
    builder = RegistryBuilder()
    builder.register(ToolDefinition(name=name, description="x", parameters=schema, handler=lambda **kw: kw))
    return builder.freeze()


def test_a_read_file_call_with_16000_unexpected_properties_gets_one_capped_answer() -> None:
    args = {"path": "notes.md", **{f"k{i}": i for i in range(16_000)}}
    text = json.dumps(args)
    assert 230_000 < len(text) < 260_000  # the 243 KiB call of the report
    envelope = asyncio.run(dispatch_tool(registry_of("read_file", READ_FILE), "read_file", text, CTX))
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert envelope["error"]["errors"] == [
        {"path": "", "message": f"this object has 16001 properties; the limit is {MAX_ARGUMENT_PROPERTIES}"}
    ]
    assert len(json.dumps(envelope)) < 1_000  # (it was a 1.3 MB answer)
    # the positive control: the same tool answers a legitimate call
    ok = asyncio.run(dispatch_tool(registry_of("read_file", READ_FILE), "read_file", {"path": "a"}, CTX))
    assert ok["status"] == "ok"


def test_problems_under_the_bound_are_capped_with_a_count() -> None:
    args = {"path": "notes.md", **{f"extra_{i:03d}": i for i in range(900)}}
    envelope = asyncio.run(dispatch_tool(registry_of("read_file", READ_FILE), "read_file", args, CTX))
    errors = envelope["error"]["errors"]
    assert len(errors) == MAX_PROBLEMS + 1
    assert errors[0]["path"] == "/extra_000"
    assert errors[-1] == {
        "path": "",
        "message": f"and {900 - MAX_PROBLEMS} more problems (only the first {MAX_PROBLEMS} are listed)",
    }
    assert len(json.dumps(envelope)) < 8_000


@pytest.mark.parametrize(
    ("value", "pointer", "words"),
    [
        ({"a": list(range(MAX_ARGUMENT_ITEMS + 1))}, "/a", f"{MAX_ARGUMENT_ITEMS + 1} items"),
        ({"a": {str(i): i for i in range(MAX_ARGUMENT_PROPERTIES + 1)}}, "/a", "properties"),
        ({"a": "x" * (MAX_ARGUMENT_CHARS + 1)}, "", "characters"),
        ({"a": _nested(MAX_ARGUMENT_DEPTH + 1)}, "", "nest too deeply"),
    ],
)
def test_each_size_bound_is_checked_before_any_schema_work(value: Any, pointer: str, words: str) -> None:
    (problem,) = size_problems(value)
    assert problem.pointer == pointer and words in problem.message
    # the validator answers with the bound, never with the schema's problems
    assert json_schema_validator({"type": "object", "properties": {"a": {"type": "string"}}})(value) == [
        problem
    ]


def test_values_just_within_the_bounds_pass_the_size_check() -> None:
    assert size_problems({"a": list(range(MAX_ARGUMENT_ITEMS))}) == []
    assert size_problems({str(i): i for i in range(MAX_ARGUMENT_PROPERTIES)}) == []
    assert size_problems(_nested(MAX_ARGUMENT_DEPTH - 1)) == []


def test_json_text_past_the_bound_is_refused_before_it_is_parsed() -> None:
    text = '{"path": "' + "x" * MAX_ARGUMENT_CHARS + '"}'
    envelope = asyncio.run(dispatch_tool(registry_of("read_file", READ_FILE), "read_file", text, CTX))
    (problem,) = envelope["error"]["errors"]
    assert "characters of JSON" in problem["message"]


def test_a_pattern_past_the_automaton_bound_is_refused_at_registration() -> None:
    huge = "(?:" + "|".join(f"[a-z]{{{n}}}x{n}" for n in range(1, 400)) + "){1,4}"
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": huge}}}
    with pytest.raises(ToolRegistrationError) as error:
        registry_of("t", schema)
    assert error.value.code in ("RS005", "RS007")
    # the positive control: the same shape with a small pattern registers
    registry_of("t", {"type": "object", "properties": {"a": {"type": "string", "pattern": "^[a-z]{1,4}$"}}})


def costly_call() -> tuple[ToolRegistry, dict[str, Any]]:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "pattern": COSTLY}}},
        "additionalProperties": {"type": "string", "pattern": COSTLY},
    }
    rng = random.Random(23)
    values = ["".join(rng.choice("ab") for _ in range(979)) + "a" + "b" * 20 for _ in range(40)]
    return registry_of("tagged", schema), {"tags": values, **{f"k{i}": v for i, v in enumerate(values)}}


def test_a_costly_but_valid_pattern_over_40_values_of_1000_characters_is_accepted() -> None:
    registry, args = costly_call()
    assert sum(len(v) for v in args["tags"]) == 40_000
    envelope = asyncio.run(dispatch_tool(registry, "tagged", args, CTX))
    assert envelope["status"] == "ok"
    bad = {**args, "k0": args["k0"][:-1] + "c"}
    envelope = asyncio.run(dispatch_tool(registry, "tagged", bad, CTX))
    assert [e["path"] for e in envelope["error"]["errors"]] == ["/k0"]


def test_the_event_loop_keeps_answering_while_a_large_call_is_validated() -> None:
    registry, args = costly_call()

    async def scenario() -> tuple[int, str]:
        ticks = 0
        running = True

        async def other_client() -> None:
            nonlocal ticks
            while running:
                ticks += 1
                await asyncio.sleep(0)

        other = asyncio.create_task(other_client())
        await asyncio.sleep(0)
        before = ticks
        envelope = await dispatch_tool(registry, "tagged", args, CTX)
        during = ticks - before
        running = False
        await other
        return during, envelope["status"]

    during, status = asyncio.run(scenario())
    assert status == "ok"
    assert during >= 1  # the call handed the loop back (it was validated in a worker thread)
