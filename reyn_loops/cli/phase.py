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
from stdin; the phase is resumed with it. Exit 0 on finish/transition; 1 on abort or when the model
call fails (provider error, after litellm's retries); 2 for a bad phase file, allowed_ops that
match no op, a missing API key, or a usage / profile / load error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reyn_core import ReynError, command_parser

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


RUNNER_OPTIONS = {
    "allowed_ops",
    "name",
    "instructions",
    "artifact_type",
    "next_phases",
    "max_steps",
    "structured",
}
"""The phase file's keys that are ``PhaseRunner`` options of the same name, passed to it as they are."""


def read_phase_file(path: Path) -> PhaseFile:
    """Parse and validate a phase file; ``ReynError`` naming the file and each bad key otherwise."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

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
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ReynError(f"phase file {str(path)!r} is invalid: {problems}") from None


RUN_DESCRIPTION = """\
Run one phase of a skill with a model: the model answers with the phase output contract, its ops
run through the dispatcher under the phase's allowed_ops, and the artifact is printed (with --json:
{status, next_phase, artifact, error, ops} on stdout, the transcript on stderr).

The phase file (TOML) has: name, task (required); instructions, model, allowed_ops, artifact_type,
next_phases, max_steps, structured, api_base (optional). Unknown keys are errors.

The API key comes from the provider's usual environment variable (OPENAI_API_KEY, ...) or from
the variable named by --api-key-env; with an api_base and no key a placeholder is sent.

Exit codes: 0 finish or transition; 1 abort, or the model call failed; 2 bad phase file,
allowed_ops that match no op, missing API key, usage / profile / load error."""


def build_parser() -> argparse.ArgumentParser:
    p = command_parser(
        "reyn phase",
        description="Run a phase from a TOML phase file.",
        option_help={"--workspace": "the folder the ops work in (default: the current directory)"},
    )
    psub = p.add_subparsers(dest="phase_command", metavar="SUBCOMMAND")
    psub.required = True
    r = psub.add_parser(
        "run",
        help="run one phase and print its transcript and artifact",
        description=RUN_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("file", help="the phase TOML file")
    r.add_argument("--model", help="a litellm model (overrides the file's model)")
    r.add_argument("--api-base", help="an OpenAI-compatible endpoint (overrides the file's api_base)")
    r.add_argument("--api-key-env", metavar="VAR", help="read the API key from this environment variable")
    r.add_argument(
        "--answer", action="append", default=[], help="answer to a question the phase asks (repeatable)"
    )
    return p


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def main(argv: list[str], loaded: Any) -> int:
    """``reyn phase run FILE ...`` with ``loaded``, the ``LoadResult`` of the profile ``reyn`` chose."""
    from reyn_core import ToolContext
    from reyn_loops import LiteLLMClient, LLMCallError, PhaseRunner
    from reyn_loops.transcript import Transcript

    from .chat import resolve_api_key

    args = build_parser().parse_args(argv)
    spec = read_phase_file(Path(args.file))
    model = args.model or spec.model
    if not model:
        raise ReynError(f'phase file {args.file!r} names no model; add model = "..." or pass --model')
    api_base = args.api_base or spec.api_base
    api_key = resolve_api_key(model, args.api_key_env, api_base)
    registry = loaded.registry
    out = sys.stderr if args.json else sys.stdout
    transcript = Transcript(out)
    runner = PhaseRunner(
        registry,
        model=model,
        ctx=ToolContext(surface="phase", agent="cli", workspace=Path(loaded.workspace)),
        client=LiteLLMClient(api_base=api_base, api_key=api_key),
        on_event=transcript,
        **spec.model_dump(include=RUNNER_OPTIONS),
    )
    check_allowed_ops(runner, args.file, from_file=spec.allowed_ops is not None)
    transcript.line(
        f"phase {spec.name!r} — model {model}, ops: {', '.join(o.kind for o in runner.surface.ops) or 'none'}"
    )
    try:
        result = asyncio.run(_drive(runner, spec.task, list(args.answer), transcript))
    except LLMCallError as exc:
        print(f"reyn: model error: {exc}", file=sys.stderr, flush=True)
        if args.json:
            emit_json({"status": "error", "next_phase": None, "artifact": None, "error": str(exc), "ops": []})
        return EXIT_FAILED
    summary = {
        "status": result.status,
        "next_phase": result.next_phase,
        "artifact": result.artifact,
        "error": result.error,
        "ops": [{"kind": o["kind"], "status": o["result"].get("status")} for o in result.op_results],
    }
    if args.json:
        emit_json(summary)
    else:
        transcript.line("artifact: " + json.dumps(result.artifact, ensure_ascii=False, indent=2))
    return EXIT_OK if result.status in ("finish", "transition") else EXIT_FAILED


def check_allowed_ops(runner: Any, file: str, *, from_file: bool) -> None:
    """``ReynError`` (exit 2) when the list matches no phase op at all — a phase with nothing to do
    must not call (and pay for) the model — or, for a list written in the phase file (``from_file``),
    when any entry matches no tool (a typo). The profile's ``default_allowed_ops`` may name packs
    that are not enabled. The message lists the ops and clusters this profile offers to phases."""
    from reyn_core.host import op_matches, phase_context, render_phase

    allowed = list(runner.allowed_ops)
    if not allowed:
        return  # a phase declared without ops: the model only reasons
    unknown = [e for e in allowed if not any(op_matches(e, t) for t in runner.registry)] if from_file else []
    if not unknown and runner.surface.ops:
        return
    catalogue = render_phase(runner.registry, phase_context(runner.ctx, ["*"]), ["*"]).ops
    names = sorted(o.kind for o in catalogue)
    clusters = sorted({runner.registry.get(o.kind).cluster for o in catalogue})
    known = (
        f"known ops: {', '.join(names)}; clusters: {', '.join(clusters)}"
        if names
        else "this profile offers no phase ops at all (enable plugins in [plugins] enable)"
    )
    what = (
        f"{', '.join(repr(e) for e in unknown)} match{'es' if len(unknown) == 1 else ''} "
        "no tool name or cluster"
        if unknown
        else f"allowed_ops {allowed} match no op a phase may use"
        + ("" if from_file else " (from the profile's [surfaces.phase] default_allowed_ops)")
    )
    raise ReynError(f"phase file {file!r}: {what}; {known}")


async def _drive(runner: Any, task: str, answers: list[str], transcript: Any) -> Any:
    result = await runner.run(task)
    while result.status == "suspended":
        if answers:
            answer = answers.pop(0)
        else:
            transcript.line(f"question: {result.question}")
            if sys.stdin.isatty():
                print("answer> ", end="", file=sys.stderr, flush=True)  # a prompt: never stdout
            answer = (await asyncio.to_thread(sys.stdin.readline)).strip()
        transcript.line(f"  user answers: {answer}")
        result = await runner.resume(result.state, answer)
    return result
