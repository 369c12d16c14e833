"""``reyn chat --model MODEL``: an interactive router session over the profile's tools.

Needs the ``[llm]`` extra and, for a hosted model, that provider's key in the environment
(e.g. ``OPENAI_API_KEY``); ``--api-base`` points at any OpenAI-compatible endpoint. Lines are read
from stdin, so the session can also be scripted. ``/tools`` lists the tools, ``/exit`` ends.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from . import EXIT_FAILED, EXIT_OK


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("chat", parents=[common], help="interactive router session with a model (needs [llm])")
    p.add_argument("--model", required=True, help="a litellm model, e.g. openai/gpt-4o-mini or anthropic/claude-…")
    p.add_argument("--api-base", help="an OpenAI-compatible endpoint (e.g. a local server)")
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    p.add_argument("--system", help="system prompt")
    p.add_argument("--max-turns", type=int, default=8, help="model calls per user message (default 8)")
    p.add_argument("--no-stream", action="store_true", help="do not stream the answer")
    p.add_argument("--plan-mode", action="store_true", help="plan mode: the `plan` tool is hidden")
    p.add_argument("--workspace", default=".", help="workspace root for tools (default: current directory)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..context import ToolContext
    from ..errors import ReynError
    from ..surfaces import LiteLLMClient, RouterLoop
    from ..surfaces.transcript import Transcript
    from .loading import load_from_args

    result = load_from_args(args)
    registry = result.registry
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        raise ReynError(f"--api-key-env names {args.api_key_env!r}, which is not set")
    if args.api_base and not api_key and not os.environ.get("OPENAI_API_KEY"):
        api_key = "no-key"  # local OpenAI-compatible servers ignore the key, but the client requires one
    transcript = Transcript(show_model_calls=False)
    ctx = ToolContext(surface="router", agent="chat", workspace=Path(args.workspace).resolve())
    loop = RouterLoop(registry, model=args.model, ctx=ctx, client=LiteLLMClient(api_base=args.api_base, api_key=api_key),
                      max_turns=args.max_turns, stream=not args.no_stream, plan_mode=args.plan_mode,
                      system_prompt=args.system, on_event=transcript)
    return asyncio.run(_session(loop, args.model, args.max_turns))


async def _session(loop: Any, model: str, max_turns: int) -> int:
    """One event loop for the whole session, so tool sessions (e.g. MCP) opened in a turn stay usable."""
    from ..surfaces import LLMCallError

    names = [t["function"]["name"] for t in loop.tools()]
    print(f"reyn chat — model {model}, {len(names)} tools. /tools lists them, /exit ends.", flush=True)
    messages: list[dict[str, Any]] = []
    status = EXIT_OK
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("you> ", end="", flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit"):
            break
        if text == "/tools":
            print("  " + (", ".join(names) or "(no tools: enable plugins in the profile)"), flush=True)
            continue
        if not interactive:
            print(f"you> {text}", flush=True)
        try:
            outcome = await loop.run([*messages, {"role": "user", "content": text}])
        except LLMCallError as exc:
            print(f"reyn: model error: {exc}", file=sys.stderr, flush=True)
            status = EXIT_FAILED
            continue  # the conversation stays as it was before this message
        if outcome.status == "pending":
            # This CLI host has no agents or planner to finish deferred tools: say so to the model.
            envelope = {"status": "error", "error": {"kind": "runtime_missing",
                                                     "message": "this host cannot complete deferred tools"}}
            outcome = await loop.resume(outcome, {p.id: envelope for p in outcome.pending})
        messages = outcome.messages
        if outcome.status == "turn_limit":
            print(f"  (stopped after {max_turns} model calls)", flush=True)
    return status
