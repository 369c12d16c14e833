"""``reyn phase run FILE``: run one phase described by a small TOML file.

::

    name = "summarise"                 # phase name (required)
    task = "Summarise notes/todo.md"   # the user message (required)
    instructions = "Be brief."         # optional
    model = "openai/gpt-4o-mini"       # optional if --model is given
    allowed_ops = ["file"]             # optional; default: the profile's default_allowed_ops
    artifact_type = "summary"          # optional
    next_phases = ["review"]           # optional
    max_steps = 6                      # optional (default 8)
    structured = true                  # optional; default: ask litellm whether the model supports it
    api_base = "http://127.0.0.1:8000/v1"   # optional OpenAI-compatible endpoint

When the phase asks the user (``ask_user``), the answer comes from ``--answer`` (in order), else
from stdin; the phase is resumed with it. Exit 0 on finish/transition, 1 on abort.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import EXIT_FAILED, EXIT_OK


class PhaseFile(BaseModel):
    """The phase file's fields (unknown keys are errors: a typo must not be ignored)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    task: str = Field(min_length=1)
    instructions: str = ""
    model: str | None = None
    allowed_ops: list[str] | None = None
    artifact_type: str | None = None
    next_phases: list[str] = Field(default_factory=list)
    max_steps: int = Field(default=8, ge=1, le=100)
    structured: bool | None = None
    api_base: str | None = None


def read_phase_file(path: Path) -> PhaseFile:
    """Parse and validate a phase file; ``ReynError`` naming the file and each bad key otherwise."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    from ..errors import ReynError

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReynError(f"phase file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReynError(f"phase file {str(path)!r} cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ReynError(f"phase file {str(path)!r} is not valid TOML: {exc}") from None
    try:
        return PhaseFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors(include_url=False))
        raise ReynError(f"phase file {str(path)!r} is invalid: {problems}") from None


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("phase", parents=[common], help="run a phase from a TOML phase file (needs [llm])")
    psub = p.add_subparsers(dest="phase_command", metavar="SUBCOMMAND")
    psub.required = True
    r = psub.add_parser("run", parents=[common], help="run one phase and print its transcript and artifact")
    r.add_argument("file", help="the phase TOML file")
    r.add_argument("--model", help="a litellm model (overrides the file's model)")
    r.add_argument("--api-base", help="an OpenAI-compatible endpoint (overrides the file's api_base)")
    r.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    r.add_argument("--answer", action="append", default=[], help="answer to a question the phase asks (repeatable)")
    r.add_argument("--workspace", default=".", help="workspace root for ops (default: current directory)")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from ..context import ToolContext
    from ..errors import ReynError
    from ..surfaces import LiteLLMClient, PhaseRunner
    from ..surfaces.transcript import Transcript
    from .loading import emit_json, load_from_args

    spec = read_phase_file(Path(args.file))
    model = args.model or spec.model
    if not model:
        raise ReynError(f"phase file {args.file!r} names no model; add model = \"...\" or pass --model")
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    if args.api_key_env and not api_key:
        raise ReynError(f"--api-key-env names {args.api_key_env!r}, which is not set")
    if (args.api_base or spec.api_base) and not api_key and not os.environ.get("OPENAI_API_KEY"):
        api_key = "no-key"  # local OpenAI-compatible servers ignore the key, but the client requires one
    registry = load_from_args(args).registry
    out = sys.stderr if args.json else sys.stdout
    transcript = Transcript(out)
    runner = PhaseRunner(
        registry, model=model, ctx=ToolContext(surface="phase", agent="cli", workspace=Path(args.workspace).resolve()),
        allowed_ops=spec.allowed_ops, client=LiteLLMClient(api_base=args.api_base or spec.api_base, api_key=api_key),
        name=spec.name, instructions=spec.instructions, artifact_type=spec.artifact_type,
        next_phases=spec.next_phases, max_steps=spec.max_steps, structured=spec.structured, on_event=transcript)
    transcript.line(f"phase {spec.name!r} — model {model}, ops: {', '.join(o.kind for o in runner.surface.ops) or 'none'}")
    result = asyncio.run(_drive(runner, spec.task, list(args.answer), transcript))
    summary = {"status": result.status, "next_phase": result.next_phase, "artifact": result.artifact,
               "error": result.error, "ops": [{"kind": o["kind"], "status": o["result"].get("status")}
                                              for o in result.op_results]}
    if args.json:
        emit_json(summary)
    else:
        transcript.line("artifact: " + json.dumps(result.artifact, ensure_ascii=False, indent=2))
    return EXIT_OK if result.status in ("finish", "transition") else EXIT_FAILED


async def _drive(runner: Any, task: str, answers: list[str], transcript: Any) -> Any:
    result = await runner.run(task)
    while result.status == "suspended":
        if answers:
            answer = answers.pop(0)
        else:
            transcript.line(f"question: {result.question}")
            if sys.stdin.isatty():
                print("answer> ", end="", flush=True)
            answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
        transcript.line(f"  user answers: {answer}")
        result = await runner.resume(result.state, answer)
    return result
