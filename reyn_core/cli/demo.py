"""``reyn demo`` — the main job, offline and without an API key.

At this stage it builds a registry from a few host tools and prints both rendered surfaces; the
LLM-surfaces issue replaces it with the full demo over the six packs.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", parents=[common], help="run the offline demo (no API key needed)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import ToolContext, ToolGates, ToolRegistry, render_phase, render_router, tool

    @tool(cluster="text", purity="read_only")
    def word_count(text: str) -> int:
        """Count the words in a text."""
        return len(text.split())

    @tool(cluster="text", purity="read_only", gates=ToolGates(router="deny"))
    def outline(text: str, max_items: int = 5) -> list[str]:
        """Return the first lines of a text as an outline (phase only)."""
        return [line for line in text.splitlines() if line.strip()][:max_items]

    builder = ToolRegistry()
    builder.register(word_count)
    builder.register(outline)
    registry = builder.freeze()
    ctx = ToolContext(surface="router", agent="demo")
    router = render_router(registry, ctx)
    phase = render_phase(registry, ctx, ["text"])
    if args.json:
        print(json.dumps({"router": router, "phase": phase.output_schema}, indent=2))
        return 0
    print("== router surface (OpenAI tools array) ==")
    print(json.dumps(router, indent=2))
    print("\n== phase surface (op catalogue) ==")
    print(phase.prompt_text())
    return 0
