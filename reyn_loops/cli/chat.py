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

from reyn_core import ReynError, command_parser

from . import EXIT_FAILED, EXIT_OK

DESCRIPTION = """\
An interactive router session: each line you type is a user message; the model may call the tools
your profile enables (the same registry, gates and dispatcher as everywhere else).

Session commands:  /tools  list the tools the model is offered
                   /exit   end the session (also /quit, or end of input)

The API key comes from the provider's usual environment variable (OPENAI_API_KEY,
ANTHROPIC_API_KEY, ...; litellm names it) or from the variable named by --api-key-env. With
--api-base and no key, a placeholder key is sent (local OpenAI-compatible servers ignore it).

Exit codes: 0 the session ended normally; 1 a model call failed during the session (the error was
printed and the conversation went on from before that message); 2 usage, profile or load error,
or a missing API key (checked before the session starts)."""


DEFERRED_REFUSAL = {
    "status": "error",
    "error": {"kind": "runtime_missing", "message": "this host cannot complete deferred tools"},
}


def build_parser() -> argparse.ArgumentParser:
    p = command_parser(
        "reyn chat",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        option_help={
            "--workspace": "the folder the tools work in (default: the current directory)",
            "--json": argparse.SUPPRESS,  # refused: a session has no JSON output
        },
    )
    p.add_argument(
        "--model", required=True, help="a litellm model, e.g. openai/gpt-4o-mini or anthropic/claude-…"
    )
    p.add_argument("--api-base", help="an OpenAI-compatible endpoint (e.g. a local server)")
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    p.add_argument("--system", help="system prompt")
    p.add_argument("--max-turns", type=int, default=8, help="model calls per user message (default 8)")
    p.add_argument("--no-stream", action="store_true", help="do not stream the answer")
    p.add_argument("--plan-mode", action="store_true", help="plan mode: tools denying plan mode are hidden")
    return p


def resolve_api_key(model: str, api_key_env: str | None, api_base: str | None) -> str | None:
    """The key to send: from ``--api-key-env``, else None (litellm reads the provider's variable), or a
    placeholder for a local ``--api-base``. ``ReynError`` (exit 2) when the model needs a key and none
    is set, naming the variable and ``--api-key-env``."""
    from reyn_loops.llm import missing_api_keys

    api_key = os.environ.get(api_key_env) if api_key_env else None
    if api_key_env and not api_key:
        raise ReynError(f"--api-key-env names {api_key_env!r}, which is not set")
    if api_base and not api_key and not os.environ.get("OPENAI_API_KEY"):
        return "no-key"  # local OpenAI-compatible servers ignore the key, but the client requires one
    missing = missing_api_keys(model, api_key=api_key, api_base=api_base)
    if missing:
        raise ReynError(
            f"model {model!r} needs an API key: set {' or '.join(missing)}, or name the variable "
            "that holds it with --api-key-env VAR"
        )
    return api_key


def main(argv: list[str], loaded: Any) -> int:
    """``reyn chat ...`` with ``loaded``, the ``LoadResult`` of the profile ``reyn`` chose."""
    from reyn_core import ToolContext
    from reyn_loops import LiteLLMClient, RouterLoop
    from reyn_loops.transcript import Transcript

    args = build_parser().parse_args(argv)
    if args.json:
        raise ReynError("reyn chat is interactive and has no --json output")
    if args.max_turns < 1:
        raise ReynError("--max-turns must be at least 1")
    api_key = resolve_api_key(args.model, args.api_key_env, args.api_base)
    registry = loaded.registry
    transcript = Transcript(show_model_calls=False)
    import secrets

    session = "chat-" + secrets.token_hex(8)  # approvals "for this session" end when the chat does
    ctx = ToolContext(
        surface="router",
        agent="chat",
        workspace=Path(loaded.workspace),  # the load's: what its plugins protect (one reader)
        extras={"registry": registry},  # for tools that read the session's registry
        session=session,
    )
    loop = RouterLoop(
        registry,
        model=args.model,
        ctx=ctx,
        client=LiteLLMClient(api_base=args.api_base, api_key=api_key),
        max_turns=args.max_turns,
        stream=not args.no_stream,
        plan_mode=args.plan_mode,
        system_prompt=args.system,
        on_event=transcript,
        deferral=loaded.deferral,
    )
    try:
        return asyncio.run(_session(loop, args.model, args.max_turns, no_tools_hint(loaded)))
    finally:
        if registry.approvals is not None:
            try:
                registry.approvals.end_session(session)
            except Exception as exc:  # the store is gone or broken (sqlite3, psycopg, OSError …):
                # those approvals still end at their TTL; a clear line, no traceback
                print(
                    f"reyn: could not end this session's approvals ({type(exc).__name__}: {exc}); "
                    "they end at their TTL",
                    file=sys.stderr,
                )


def no_tools_hint(result: Any) -> str:
    """What to do when the model is offered no tools: which profile was read and how to enable plugins."""
    source = result.profile.source
    where = (
        f"the profile {source}"
        if source
        else "no profile file was found (./reyn.toml, $REYN_PROFILE_FILE …) and"
    )
    return (
        f'{where} enables no plugin tools: add [plugins] enable = ["file", …] to reyn.toml or pass '
        "--profile-file; `reyn plugins list` shows what is installed"
    )


async def _session(loop: Any, model: str, max_turns: int, hint: str = "") -> int:
    """One event loop for the whole session, so tool sessions (e.g. MCP) opened in a turn stay usable."""
    from reyn_loops import LLMCallError, tool_message

    names = [t["function"]["name"] for t in loop.tools()]
    print(f"reyn chat — model {model}, {len(names)} tools. /tools lists them, /exit ends.", flush=True)
    if not names and hint:
        print(f"  ({hint})", flush=True)
    messages: list[dict[str, Any]] = []
    status = EXIT_OK
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("you> ", end="", file=sys.stderr, flush=True)  # a prompt: never the transcript
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit"):
            break
        if text == "/tools":
            print(
                "  " + (", ".join(names) or f"(no tools: {hint or 'enable plugins in the profile'})"),
                flush=True,
            )
            continue
        if not interactive:
            print(f"you> {text}", flush=True)
        try:
            outcome = await loop.run([*messages, {"role": "user", "content": text}])
            resumes = 0
            while outcome.status == "pending" and resumes < max_turns:
                # This CLI host has no agents or planner to finish deferred tools: say so to the model,
                # as often as it asks (bounded like the turns). Calls waiting for approval are put to
                # the terminal's user first (docs/approvals.md).
                resumes += 1
                from reyn_core.host import decide_pending_on_terminal

                if not await decide_pending_on_terminal(loop.registry, outcome.pending):
                    break
                outcome = await loop.resume(outcome, {p.id: DEFERRED_REFUSAL for p in outcome.pending})
        except LLMCallError as exc:
            print(f"reyn: model error: {exc}", file=sys.stderr, flush=True)
            status = EXIT_FAILED
            continue  # the conversation stays as it was before this message
        messages = outcome.messages
        if outcome.status == "pending":  # answer the last deferred calls so the conversation stays valid
            messages = [*messages, *(tool_message(p.id, DEFERRED_REFUSAL) for p in outcome.pending)]
            print(f"  (stopped: the model kept calling deferred tools {max_turns} times)", flush=True)
        if outcome.status == "turn_limit":
            print(f"  (stopped after {max_turns} model calls)", flush=True)
    return status
