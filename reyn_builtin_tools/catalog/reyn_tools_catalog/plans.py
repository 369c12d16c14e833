"""Plans: a goal and 2-7 steps with ids, descriptions, tools and dependencies, checked before the
host's ``dispatch_plan`` bridge ever sees them."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import ArgumentProblem

STEP_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
MIN_STEPS, MAX_STEPS = 2, 7
# Tools a plan step may never name: planning inside a plan step would recurse without end.
NOT_IN_STEPS = frozenset({"plan"})
# A plan's goal and each step's description: some text, at most 2000 characters.
_Text = Annotated[str, Field(min_length=1, max_length=2000)]


class PlanStep(BaseModel):
    """One step of a plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(
        description="a short id unique in this plan, e.g. 's1' (letters, digits, '_', '-')",
        min_length=1,
        max_length=32,
    )
    description: _Text = Field(description="what this step does and what it produces")
    tools: list[str] = Field(
        default_factory=list,
        max_length=16,
        description="the tools this step may use (names from your tool list)",
    )
    depends_on: list[str] = Field(
        default_factory=list,
        max_length=MAX_STEPS,
        description="ids of the steps that must finish before this one",
    )


class Plan(BaseModel):
    """A plan: the goal and its steps, as the ``plan`` tool receives it and ``dispatch_plan`` gets it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goal: _Text = Field(description="what the whole plan achieves")
    steps: list[PlanStep] = Field(
        min_length=MIN_STEPS, max_length=MAX_STEPS, description=f"{MIN_STEPS} to {MAX_STEPS} steps"
    )


def plan_problems(plan: Plan, known_tools: Collection[str]) -> list[ArgumentProblem]:
    """Every reason ``plan`` cannot run, each with a JSON pointer into the arguments; [] when it can."""
    problems: list[ArgumentProblem] = []
    first_index: dict[str, int] = {}
    for i, step in enumerate(plan.steps):
        if STEP_ID_RE.fullmatch(step.id) is None:
            problems.append(
                ArgumentProblem(
                    f"/steps/{i}/id", f"step id {step.id!r} may only use letters, digits, '_' and '-'"
                )
            )
        if step.id in first_index:
            problems.append(
                ArgumentProblem(
                    f"/steps/{i}/id",
                    f"step id {step.id!r} is already used by step {first_index[step.id]}; ids must be unique",
                )
            )
        else:
            first_index[step.id] = i
    ids = sorted(first_index)
    known = set(known_tools) - NOT_IN_STEPS
    for i, step in enumerate(plan.steps):
        for j, dep in enumerate(step.depends_on):
            if dep == step.id:
                problems.append(
                    ArgumentProblem(f"/steps/{i}/depends_on/{j}", f"step {step.id!r} depends on itself")
                )
            elif dep not in first_index:
                problems.append(
                    ArgumentProblem(
                        f"/steps/{i}/depends_on/{j}",
                        f"step {step.id!r} depends on {dep!r}, which is not a step of this plan; "
                        f"step ids: {', '.join(ids)}",
                    )
                )
        for j, name in enumerate(step.tools):
            if name in NOT_IN_STEPS:
                problems.append(ArgumentProblem(f"/steps/{i}/tools/{j}", f"a plan step cannot use {name!r}"))
            elif name not in known:
                listed = ", ".join(sorted(known)[:40]) or "none"
                problems.append(
                    ArgumentProblem(
                        f"/steps/{i}/tools/{j}", f"unknown tool {name!r}; tools a step may use: {listed}"
                    )
                )
    cycle = _cycle(plan)
    if cycle:
        problems.append(
            ArgumentProblem("/steps", f"the steps form a cycle: {' -> '.join(cycle)}; a plan must be acyclic")
        )
    return problems


def _cycle(plan: Plan) -> list[str] | None:
    """One dependency cycle as a path of ids (first id repeated at the end), or None."""
    deps: dict[str, list[str]] = {}
    for step in plan.steps:
        deps.setdefault(step.id, [d for d in step.depends_on if d != step.id])
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in deps.get(node, []):
            if nxt not in deps:
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if state.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in deps:
        if state.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def execution_order(plan: Plan) -> list[list[str]]:
    """The steps in waves: each wave's steps depend only on earlier waves (for a valid plan)."""
    remaining = {s.id: set(s.depends_on) for s in plan.steps}
    waves: list[list[str]] = []
    done: set[str] = set()
    while remaining:
        wave = sorted(i for i, d in remaining.items() if d <= done)
        if not wave:
            break
        waves.append(wave)
        done.update(wave)
        for i in wave:
            del remaining[i]
    return waves
