"""Fixtures for the core tests: contexts, small registries."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDefinition, ToolGates, tool

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def router_ctx(tmp_path: Path) -> ToolContext:
    """A router-surface context rooted in a temporary workspace."""
    return ToolContext(surface="router", agent="tester", workspace=tmp_path)


@pytest.fixture
def phase_ctx(tmp_path: Path) -> ToolContext:
    """A phase-surface context rooted in a temporary workspace."""
    return ToolContext(surface="phase", agent="tester", workspace=tmp_path)


# --------------------------------------------------------------------------- a representative catalogue


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="File path, relative to the workspace")
    max_bytes: int = Field(default=65536, ge=1, description="Stop after this many bytes")


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tool: str
    note: str | None = None


class PlanArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    goal: str
    steps: list[Step] = Field(min_length=1)


def _catalogue() -> list[Any]:
    """Tools that exercise every renderer feature: pydantic models with nested $defs, signature
    params, defaults, enums, arrays, a router-only deferred tool, a phase-only tool, an enricher."""

    @tool(cluster="file", purity="read_only")
    def read_file(args: ReadArgs) -> str:
        """Read a text file inside the workspace."""
        return args.path

    @tool(cluster="file", purity="side_effect")
    def write_file(path: str, content: str, mode: Literal["create", "overwrite"] = "create") -> str:
        """Write a text file atomically.

        Refuses paths outside the write roots.
        """
        return path

    @tool(cluster="catalog", purity="side_effect", dispatch_kind="deferred", gates=ToolGates(phase="deny"))
    def plan(args: PlanArgs) -> str:
        """Propose a multi-step plan; the host runs it later."""
        return args.goal

    @tool(cluster="catalog", purity="external", gates=ToolGates(router="deny"))
    def ask_user(question: str, choices: list[str] | None = None) -> str:
        """Ask the user a question and wait for the answer."""
        return question

    def skill_enum(schema: dict[str, Any], ctx: Any) -> dict[str, Any]:
        schema["properties"]["skill"]["enum"] = list(ctx.extras.get("skills", ()))
        return schema

    invoke_skill = ToolDefinition(
        name="invoke_skill",
        description="Run a skill by name.",
        handler=lambda skill, input=None: skill,
        cluster="catalog",
        purity="external",
        schema_enricher=skill_enum,
        parameters={
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "Skill name"},
                "input": {"type": "object"},
            },
            "required": ["skill"],
            "additionalProperties": False,
        },
    )

    @tool(cluster="web", purity="external", timeout_s=30)
    async def web_fetch(url: str, max_chars: int = 20000) -> str:
        """Fetch a URL and return readable text. Ünïcode stays as is: 東京."""
        return url

    return [read_file, write_file, plan, ask_user, invoke_skill, web_fetch]


@pytest.fixture
def catalogue() -> list[Any]:
    """Fresh definitions of the representative catalogue (registration order as written)."""
    return _catalogue()


@pytest.fixture
def build_registry() -> Any:
    """``build_registry(definitions)`` -> a frozen registry holding them, registered in that order."""
    return frozen_registry
