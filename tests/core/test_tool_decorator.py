"""@tool builds one ToolDefinition from a typed function; the dispatcher calls it the same way."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolRegistrationError, ToolRuntimeMissing, tool
from reyn_core.host import (
    RegistryBuilder,
    dispatch_tool,
    invoke_tool,
    render_phase,
    render_router,
)


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(description="What to look for")
    limit: int = 10


@tool(cluster="search", purity="read_only")
def search(args: SearchArgs) -> dict[str, object]:
    """Search the index.

    Returns the query and the limit it was given.
    """
    return {"query": args.query, "limit": args.limit, "type": type(args).__name__}


@tool(cluster="text", purity="read_only")
def repeat(text: str, times: int = 2, sep: str = " ") -> str:
    """Repeat a text."""
    return sep.join([text] * times)


@tool(cluster="text", purity="read_only")
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool(cluster="ctx", purity="read_only")
def whoami(ctx) -> str:  # type: ignore[no-untyped-def]
    """Return the calling agent."""
    return f"{ctx.agent}@{ctx.surface}"


@tool(cluster="ctx", purity="read_only")
async def where(prefix: str, context: ToolContext) -> str:
    """Return the workspace with a prefix."""
    return f"{prefix}{context.workspace.name}"


def test_pydantic_model_parameter_becomes_the_schema() -> None:
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"description": "What to look for", "type": "string"},
            "limit": {"default": 10, "type": "integer"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


async def test_pydantic_model_handler_receives_a_model_instance(router_ctx: ToolContext) -> None:
    result = await invoke_tool(frozen_registry([search]), "search", {"query": "q"}, router_ctx)
    assert result == {"query": "q", "limit": 10, "type": "SearchArgs"}


class DecidesArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: Annotated[int, Field(ge=1)] | SkipJsonSchema[None] = Field(
        None, description="How many (the tool decides if absent)."
    )
    label: str | None = None


@tool
def decides(args: DecidesArgs) -> dict:
    """Report what the tool decided."""
    return {"limit": args.limit if args.limit is not None else 5, "label": args.label}


async def test_an_argument_the_tool_decides_when_absent_states_no_default_its_type_refuses(
    router_ctx: ToolContext,
) -> None:
    # null is not a value of ``limit`` in the schema: it states no default outside its own type (a
    # strict provider refuses such a schema); ``label`` admits null, so its null default stays
    assert decides.parameters["properties"] == {
        "limit": {"type": "integer", "minimum": 1, "description": "How many (the tool decides if absent)."},
        "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    }
    registry = frozen_registry([decides])
    assert await invoke_tool(registry, "decides", {}, router_ctx) == {"limit": 5, "label": None}
    assert await invoke_tool(registry, "decides", {"limit": 2}, router_ctx) == {"limit": 2, "label": None}


def test_signature_parameters_become_the_schema_with_defaults_optional() -> None:
    assert repeat.parameters["properties"] == {
        "text": {"type": "string"},
        "times": {"default": 2, "type": "integer"},
        "sep": {"default": " ", "type": "string"},
    }
    assert repeat.parameters["required"] == ["text"]
    assert repeat.parameters["additionalProperties"] is False


def test_docstring_is_the_description_and_the_function_name_is_the_name() -> None:
    assert search.name == "search"
    assert search.description == "Search the index.\n\nReturns the query and the limit it was given."


def test_explicit_name_and_description_override_the_function() -> None:
    @tool(name="say-hi", description="Greets.")
    def hello() -> str:
        """Ignored."""
        return "hi"

    assert (hello.name, hello.description) == ("say-hi", "Greets.")


def test_decorator_settings_are_kept_on_the_definition() -> None:
    def avail(ctx: ToolContext) -> bool:
        return True

    @tool(
        cluster="c",
        purity="external",
        gates=ToolGates(phase="deny"),
        dispatch_kind="deferred",
        available=avail,
        timeout_s=1.5,
    )
    def act(x: int) -> int:
        """Act."""
        return x

    assert (act.cluster, act.purity, act.gates, act.dispatch_kind, act.available, act.timeout_s) == (
        "c",
        "external",
        ToolGates(phase="deny"),
        "deferred",
        avail,
        1.5,
    )


async def test_sync_handler_runs_and_keyword_arguments_are_bound(router_ctx: ToolContext) -> None:
    result = await invoke_tool(
        frozen_registry([repeat]), "repeat", {"text": "ab", "times": 3, "sep": "-"}, router_ctx
    )
    assert result == "ab-ab-ab"


async def test_async_handler_is_awaited(router_ctx: ToolContext) -> None:
    assert await invoke_tool(frozen_registry([shout]), "shout", {"text": "hey"}, router_ctx) == "HEY"


def test_ctx_parameter_is_not_part_of_the_schema() -> None:
    assert whoami.parameters["properties"] == {}
    assert set(where.parameters["properties"]) == {"prefix"}


async def test_ctx_is_injected_by_name(router_ctx: ToolContext) -> None:
    assert await invoke_tool(frozen_registry([whoami]), "whoami", {}, router_ctx) == "tester@router"


async def test_ctx_is_injected_by_tool_context_annotation(router_ctx: ToolContext) -> None:
    result = await invoke_tool(frozen_registry([where]), "where", {"prefix": ">"}, router_ctx)
    assert result == f">{router_ctx.workspace.name}"


async def test_injected_ctx_carries_the_dispatch_surface(router_ctx: ToolContext) -> None:
    result = await invoke_tool(frozen_registry([whoami]), "whoami", {}, router_ctx, surface="cli")
    assert result == "tester@cli"


def test_star_args_cannot_be_described() -> None:
    with pytest.raises(TypeError, match=r"\*args/\*\*kwargs"):

        @tool
        def bad(*items: str) -> None:
            """Bad."""


def test_registering_a_non_callable_is_rt001() -> None:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(42)  # type: ignore[arg-type]
    assert info.value.code == "RT001"


def test_a_plain_typed_function_registers_with_tool_defaults() -> None:
    def count(text: str) -> int:
        """Count words."""
        return len(text.split())

    registered = RegistryBuilder().register(count)
    assert registered.name == "count" and registered.parameters["required"] == ["text"]


# --------------------------------------------------------------------------- lazy handlers


@pytest.fixture
def lazy_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A real module on sys.path that records when it is imported."""
    name = "reyn_lazy_probe_mod"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent('''
        from reyn_core import tool

        def double(n: int) -> int:
            return n * 2

        @tool(cluster="lazy", purity="read_only")
        def triple(n: int) -> int:
            """Triple."""
            return n * 3
    ''')
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield name
    sys.modules.pop(name, None)


def lazy_tool(ref: str, name: str = "double") -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="Double a number.",
        handler=ref,
        cluster="lazy",
        purity="read_only",
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": False,
        },
    )


async def test_lazy_handler_is_not_imported_by_register_or_render(
    lazy_module: str, router_ctx: ToolContext
) -> None:
    registry = frozen_registry([lazy_tool(f"{lazy_module}:double")])
    render_router(registry, router_ctx)
    render_phase(registry, router_ctx, ["lazy"])
    assert lazy_module not in sys.modules


async def test_lazy_handler_is_imported_on_first_call(lazy_module: str, router_ctx: ToolContext) -> None:
    registry = frozen_registry([lazy_tool(f"{lazy_module}:double")])
    assert await invoke_tool(registry, "double", {"n": 21}, router_ctx) == 42
    assert lazy_module in sys.modules


async def test_lazy_reference_to_a_tool_definition_uses_its_handler(
    lazy_module: str, router_ctx: ToolContext
) -> None:
    registry = frozen_registry([lazy_tool(f"{lazy_module}:triple", name="triple")])
    assert await invoke_tool(registry, "triple", {"n": 2}, router_ctx) == 6


async def test_lazy_reference_to_a_missing_attribute_is_runtime_missing(
    lazy_module: str, router_ctx: ToolContext
) -> None:
    registry = frozen_registry([lazy_tool(f"{lazy_module}:nope")])
    with pytest.raises(ToolRuntimeMissing, match="cannot be imported"):
        await invoke_tool(registry, "double", {"n": 1}, router_ctx)


def test_lazy_handler_without_colon_is_rt005() -> None:
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(lazy_tool("just_a_module"))
    assert info.value.code == "RT005"


# --------------------------------------------------------------------------- handler None


def missing_tool() -> ToolDefinition:
    return ToolDefinition(
        name="absent",
        description="Needs a runtime this host lacks.",
        parameters={"type": "object", "properties": {}},
        handler=None,
        cluster="file",
    )


def test_handler_none_is_hidden_on_the_router(router_ctx: ToolContext) -> None:
    assert render_router(frozen_registry([missing_tool()]), router_ctx) == []


def test_handler_none_is_hidden_on_the_phase(phase_ctx: ToolContext) -> None:
    assert render_phase(frozen_registry([missing_tool()]), phase_ctx, ["file"]).ops == ()


async def test_handler_none_is_runtime_missing_at_dispatch(router_ctx: ToolContext) -> None:
    envelope = await dispatch_tool(frozen_registry([missing_tool()]), "absent", {}, router_ctx)
    assert envelope["status"] == "error"
    assert envelope["error"]["kind"] == "runtime_missing"
    assert "no handler" in envelope["error"]["message"]


def test_handler_none_is_still_listed_in_the_registry() -> None:
    assert "absent" in frozen_registry([missing_tool()])


async def test_ctx_imported_only_for_type_checking_still_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "reyn_tc_only_probe_mod"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent('''
        from __future__ import annotations

        from pathlib import Path
        from typing import TYPE_CHECKING

        from reyn_core import tool

        if TYPE_CHECKING:
            from reyn_core import ToolContext

        @tool(cluster="x", purity="read_only")
        def read(path: Path, limit: int, context: ToolContext) -> str:
            """Read."""
            return f"{type(path).__name__}:{limit}:{context.agent}"
    ''')
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(name)
    try:
        assert set(module.read.parameters["properties"]) == {"path", "limit"}
        registry = frozen_registry([module.read])
        result = await invoke_tool(registry, "read", {"path": "a", "limit": 2}, ToolContext(agent="me"))
        assert result.endswith("Path:2:me")
    finally:
        sys.modules.pop(name, None)
