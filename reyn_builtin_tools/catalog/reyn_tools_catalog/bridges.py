"""A simple in-process host bridge for the CLI, the demo and tests.

``default_bridge()`` returns a ``HostBridge`` whose bridges do the least a real host would:

- ``ask_user`` prints the question (and numbered options) and reads one line — only when a terminal
  is attached (or an ``input_fn`` is given); otherwise it fails with ``runtime_missing``;
- ``run_skill`` returns the skill's instructions with the validated input, for the calling model to
  follow itself (no sub-agent is started);
- ``send_to_agent`` and ``dispatch_plan`` accept the work and record it in ``DefaultHost.delegations``
  / ``DefaultHost.plans``; nothing runs it later (a real host would).
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from reyn_core import HostBridge, ToolContext, ToolRuntimeMissing

from .plans import Plan, execution_order
from .records import Agent, Catalog, Skill
from .service import CatalogBridge


@dataclass
class DefaultHost:
    """The state behind ``default_bridge``: what was delegated and planned, and how to reach the user."""

    input_fn: Callable[[str], str] | None = None
    output: TextIO | None = None
    catalog: Catalog | Any | None = None
    delegations: list[dict[str, Any]] = field(default_factory=list)
    plans: list[dict[str, Any]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1), repr=False)

    def _terminal(self) -> Callable[[str], str] | None:
        if self.input_fn is not None:
            return self.input_fn
        stdin = sys.stdin
        if stdin is not None and stdin.isatty():
            return input
        return None

    async def ask_user(self, *, question: str, options: list[str], ctx: ToolContext) -> dict[str, Any]:
        """Prompt on the terminal and return ``{"answer": text}`` (an option's text when its number is
        typed)."""
        read = self._terminal()
        if read is None:
            raise ToolRuntimeMissing(
                "tool 'ask_user' cannot reach the user: no terminal is attached to this process; "
                "the host must supply an ask_user bridge",
                tool="ask_user",
            )
        out = self.output or sys.stderr
        lines = [f"\n? {question}"] + [f"  {i}. {opt}" for i, opt in enumerate(options, 1)]
        print("\n".join(lines), file=out, flush=True)
        try:
            answer = (await asyncio.to_thread(read, "> ")).strip()
        except EOFError:
            raise ToolRuntimeMissing(
                "tool 'ask_user': the terminal closed before the user answered", tool="ask_user"
            ) from None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            answer = options[int(answer) - 1]
        return {"answer": answer}

    def run_skill(self, *, skill: Skill, input: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Hand the skill's instructions back to the calling model, with its input."""
        return {
            "status": "ready",
            "skill": skill.name,
            "input": input,
            "instructions": skill.instructions,
            "note": "no skill runner is attached; follow these instructions yourself",
        }

    def send_to_agent(self, *, agent: Agent, message: str, ctx: ToolContext) -> dict[str, Any]:
        """Record a delegation and return its ticket."""
        ticket = f"delegation-{next(self._ids)}"
        self.delegations.append(
            {"ticket": ticket, "agent": agent.name, "message": message, "from": ctx.agent}
        )
        return {"status": "delegated", "ticket": ticket, "agent": agent.name}

    def dispatch_plan(self, *, plan: Plan, ctx: ToolContext) -> dict[str, Any]:
        """Record an accepted plan and return its id and execution order."""
        plan_id = f"plan-{next(self._ids)}"
        self.plans.append({"plan_id": plan_id, "plan": plan.model_dump(), "from": ctx.agent})
        return {
            "status": "accepted",
            "plan_id": plan_id,
            "steps": len(plan.steps),
            "order": execution_order(plan),
        }

    def bridge(self) -> HostBridge:
        """A ``HostBridge`` backed by this host: ``ask_user``, and the catalog's ``CatalogBridge``."""
        service = CatalogBridge(
            run_skill=self.run_skill,
            send_to_agent=self.send_to_agent,
            dispatch_plan=self.dispatch_plan,
            catalog=self.catalog,
        )
        return HostBridge(ask_user=self.ask_user, services={CatalogBridge: service})


def default_bridge(
    *,
    input_fn: Callable[[str], str] | None = None,
    output: TextIO | None = None,
    catalog: Catalog | Any | None = None,
) -> HostBridge:
    """A ready ``HostBridge`` for the CLI and the demo (see the module docstring).

    ``input_fn`` replaces the terminal for ``ask_user`` (e.g. in tests); ``catalog`` supplies a host
    catalogue instead of the configured folders. Use ``DefaultHost`` directly to inspect what was
    delegated or planned.
    """
    return DefaultHost(input_fn=input_fn, output=output, catalog=catalog).bridge()
