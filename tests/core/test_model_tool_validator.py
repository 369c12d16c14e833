"""A pydantic-model tool's one validator is its model's own (issue 23): chosen once per snapshot
entry, validating and building the handler's model in one pass; a tool whose registered schema is
not the model's keeps the compiled schema; a lazy ``module:attr`` handler's model is found when it
resolves; the refusals are worded and capped as for every tool; and a large call is validated off
the event loop, which keeps answering meanwhile (shown by an event, not a timing)."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model, field_validator
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDefinition, tool
from reyn_core.host import dispatch_tool
from reyn_core.validation import ModelValidator, SchemaValidator
from reyn_core.validation.messages import MAX_PROBLEMS

CTX = ToolContext(surface="router")


class GrepArgs(BaseModel):
    path: str = Field(description="File to search")
    limit: int = Field(20, ge=1, le=1000)
    mode: Literal["fast", "slow"] = "fast"


@tool
async def grep(args: GrepArgs) -> dict[str, Any]:
    """Search a file."""
    return {"path": args.path, "limit": args.limit, "model": type(args).__name__}


@tool
def add(a: int, b: int = 0) -> int:
    """Add two numbers."""
    return a + b


def _frozen(*tools: Any) -> Any:
    return frozen_registry(tools)


def test_a_model_tool_is_validated_by_its_model_chosen_when_the_snapshot_is_frozen() -> None:
    edited = dataclasses.replace(grep, name="grep_edited", parameters={**grep.parameters, "description": "x"})
    registry = _frozen(grep, add, edited)
    model_tool = registry.prepared("grep")
    assert model_tool.shape is not None  # resolved at freeze, not at the first call
    assert isinstance(model_tool.validator, ModelValidator) and model_tool.validator.model is GrepArgs
    assert isinstance(registry.prepared("add").validator, ModelValidator)  # a typed signature's model
    # the registered schema is not the model's: that schema validates, and pydantic only binds
    assert isinstance(registry.prepared("grep_edited").validator, SchemaValidator)


async def test_the_model_instance_the_validator_built_is_what_the_handler_gets() -> None:
    registry = _frozen(grep)
    envelope = await dispatch_tool(registry, "grep", {"path": "a.md", "limit": 3}, CTX)
    assert envelope == {"status": "ok", "data": {"path": "a.md", "limit": 3, "model": "GrepArgs"}}


async def test_refusals_are_worded_as_for_a_schema_tool() -> None:
    registry = _frozen(grep, add)
    envelope = await dispatch_tool(registry, "grep", {"limit": True, "mode": "medium", "x": 1}, CTX)
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert envelope["error"]["errors"] == [
        {"path": "/path", "message": "is a required property and is missing"},
        {"path": "/limit", "message": "expected integer, got boolean"},
        {"path": "/mode", "message": "expected one of 'fast', 'slow', got 'medium'"},
        {"path": "/x", "message": "unexpected property (allowed: limit, mode, path)"},
    ]
    envelope = await dispatch_tool(registry, "grep", {"path": "a", "limit": 0}, CTX)
    assert envelope["error"]["errors"] == [{"path": "/limit", "message": "must be >= 1, got 0"}]
    # the rest keeps working
    assert (await dispatch_tool(registry, "add", {"a": 1, "b": 2}, CTX)) == {"status": "ok", "data": 3}


Many = create_model("Many", **{f"f{i}": (int, ...) for i in range(60)})  # type: ignore[call-overload]


@tool(name="many")
def many(args: Many) -> int:  # type: ignore[valid-type]
    """Take many numbers."""
    return 0


async def test_many_problems_are_capped_with_a_count() -> None:
    registry = _frozen(many)
    envelope = await dispatch_tool(registry, "many", {f"f{i}": "x" for i in range(60)}, CTX)
    problems = envelope["error"]["errors"]
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1] == {
        "path": "",
        "message": f"and 40 more problems (only the first {MAX_PROBLEMS} are listed)",
    }


async def test_a_lazy_handler_finds_its_model_when_it_resolves(tmp_path: Path) -> None:
    package = tmp_path / "lazy_model_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(
        "from pydantic import BaseModel\n"
        "from reyn_core import tool\n"
        "class EchoArgs(BaseModel):\n"
        "    text: str\n"
        "@tool\n"
        "def echo(args: EchoArgs) -> str:\n"
        '    """Echo a text."""\n'
        "    return args.text\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib

        eager = importlib.import_module("lazy_model_pkg.tools").echo
        lazy = ToolDefinition(
            name="echo",
            description="Echo a text.",
            parameters=eager.parameters,
            handler="lazy_model_pkg.tools:echo",
        )
        registry = _frozen(lazy)
        assert registry.prepared("echo").shape is None  # a load imports no handler module
        assert (await dispatch_tool(registry, "echo", {"text": "hi"}, CTX)) == {"status": "ok", "data": "hi"}
        assert isinstance(registry.prepared("echo").validator, ModelValidator)
        refused = await dispatch_tool(registry, "echo", {"text": 1}, CTX)
        assert refused["error"]["errors"] == [{"path": "/text", "message": "expected string, got integer"}]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("lazy_model_pkg")]:
            del sys.modules[name]


SERVED = threading.Event()  # set by the event loop once it has answered the small call
SEEN: list[bool] = []


class Notes(BaseModel):
    notes: list[str]

    @field_validator("notes")
    @classmethod
    def wait_for_the_loop(cls, value: list[str]) -> list[str]:
        if len(value) > 100:  # the large call: its validation waits until the loop has served
            SEEN.append(SERVED.wait(timeout=30))
        return value


@tool(name="keep")
async def keep(args: Notes) -> int:
    """Keep notes."""
    return len(args.notes)


def test_the_loop_answers_another_call_while_a_large_call_is_validated() -> None:
    SERVED.clear()
    SEEN.clear()
    registry = _frozen(keep)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        large = asyncio.create_task(dispatch_tool(registry, "keep", {"notes": ["n" * 100] * 1000}, CTX))
        await asyncio.sleep(0)  # the large call starts, and hands its validation to a thread
        small = await dispatch_tool(registry, "keep", {"notes": ["one"]}, CTX)
        SERVED.set()
        return small, await large

    small, large = asyncio.run(scenario())
    assert small == {"status": "ok", "data": 1}
    assert large == {"status": "ok", "data": 1000}
    # Had the large call been validated on the loop, the small one could not have been answered
    # before it, and its validator would have waited in vain.
    assert SEEN == [True]
