"""``reyn-demo``: the whole system end to end, offline, without an API key.

1. copy the demo workspace (notes, a skill, an agent) into a temporary folder and write its profile;
2. load the profile through the real loader and print the plugin provenance table;
   then one definition's three views: router, phase, and a ``tools/list`` from ``reyn mcp serve``;
3. start a docs page server and a scripted OpenAI-compatible model, both on 127.0.0.1;
4. run a router conversation through ``RouterLoop`` → litellm → the scripted model, with real tool
   calls (files, the web pack against the local docs page, memory, the MCP tracker over stdio, the
   example plugin), including two calls the gates and the SSRF guard refuse;
5. run a phase through ``PhaseRunner``: a contract violation sent back, reads, an ``ask_user``
   suspension resumed with an answer, a file write and a shell command, then the artifact.

Everything the transcript shows came from a real component; only the model is scripted.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from string import Template
from typing import Any, TextIO

from reyn_core import ToolContext
from reyn_core.host import phase_context, render_phase
from reyn_loops import (
    LiteLLMClient,
    PhaseResult,
    PhaseRunner,
    RouterLoop,
    RouterResult,
    SurfaceEvent,
    Transcript,
    describe_envelope,
    import_litellm,
    short,
)
from reyn_loops.testing.scripted_server import ScriptedModelServer

from .script import PHASE_TASK, ROUTER_PROMPT, DemoModel, PhaseScript, RouterScript

HERE = Path(__file__).parent
MODEL = "openai/reyn-demo-scripted"
PLUGINS = ("file", "web", "memory", "catalog", "mcp", "shell", "source", "example")
PHASE_OPS = ("file", "memory", "ask_user", "shell")
ANSWER = "plain list"
RELEASE_PAGE = """<!doctype html><html><head><title>Reyn release notes</title></head><body>
<h1>Reyn 0.1.0 release notes</h1>
<p>One registry of LLM tools, rendered for native function calling and for phase JSON contracts.</p>
<ul><li>Seven capability packs, each its own distribution.</li>
<li>Plugins load only when a profile enables them, with a digest you can pin.</li></ul>
<p>Download size: 48 MiB.</p>
<script>console.log("scripts are dropped from the readable text")</script>
</body></html>
"""


@dataclass
class DemoOutcome:
    """What the demo did, for the closing summary and ``--strict``."""

    loaded: list[str] = field(default_factory=list)
    not_loaded: dict[str, str] = field(default_factory=dict)
    router: RouterResult | None = None
    phase: PhaseResult | None = None
    contract_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Console:
    """Numbered steps with elapsed time, so long steps show progress."""

    def __init__(self, out: TextIO, steps: int) -> None:
        self.out = out
        self.steps = steps
        self.n = 0
        self.started = time.monotonic()

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def step(self, title: str) -> None:
        self.n += 1
        self.say(f"\n[{self.n}/{self.steps}] {title}   (+{time.monotonic() - self.started:.1f} s)")


@contextmanager
def docs_server(lifetime_s: float = 600.0) -> Iterator[str]:
    """A one-page docs site on 127.0.0.1 (bounded lifetime); yields the release page URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = RELEASE_PAGE.encode() if self.path == "/release-notes.html" else b"not found"
            self.send_response(200 if self.path == "/release-notes.html" else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    timer = threading.Timer(lifetime_s, server.shutdown)
    timer.daemon = True
    timer.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/release-notes.html"
    finally:
        timer.cancel()
        server.shutdown()
        server.server_close()


def prepare_workspace(root: Path, template_path: Path | None = None) -> Path:
    """Copy the demo files into ``root`` and write ``root/reyn.toml`` from ``template_path`` (default:
    the demo's ``profile.toml``); return the profile path."""
    shutil.copytree(HERE / "workspace", root, dirs_exist_ok=True)
    (root / "out").mkdir(exist_ok=True)
    (root / ".reyn").mkdir(exist_ok=True)
    values = {
        "workspace": root,
        "memory_db": root / ".reyn" / "memory.sqlite3",
        "skills": root / "skills",
        "agents": root / "agents",
        "python": sys.executable,
        "mcp_server": HERE / "mcp_server.py",
    }
    template = Template((template_path or HERE / "profile.toml").read_text(encoding="utf-8"))
    text = template.substitute({k: json.dumps(str(v)) for k, v in values.items()})
    profile = root / "reyn.toml"
    profile.write_text(text, encoding="utf-8")
    return profile


def load_plugins(profile_path: Path, console: Console, outcome: DemoOutcome) -> Any:
    """Load the profile through the real loader and print the provenance table."""
    from reyn_core.host import load, load_profile

    result = load(load_profile(profile_file=str(profile_path)))
    infos = {i.plugin_id: i for i in result.report.plugins}
    rows = []
    for pid in sorted(infos):
        i = infos[pid]
        prov = i.provenance
        rows.append(
            [
                pid,
                i.status,
                i.distribution or "-",
                i.version or "-",
                i.source_kind or "-",
                (prov.digest_scope if prov is not None else "-"),
                i.short_digest,
                str(len(i.tools)) if i.status == "loaded" else "-",
            ]
        )
    header = ["PLUGIN", "STATUS", "DISTRIBUTION", "VERSION", "SOURCE", "DIGEST OVER", "DIGEST", "TOOLS"]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        console.say("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    for pid in PLUGINS:
        info = infos.get(pid)
        if info is not None and info.status == "loaded":
            outcome.loaded.append(pid)
            continue
        why = "not installed" if info is None or info.status == "missing" else info.status
        first = next((d for d in (info.diagnostics if info else ()) if d.is_error), None)
        detail = f" — {first.code}: {first.message}" if first is not None else ""
        outcome.not_loaded[pid] = why + detail
        console.say(f"  ! {pid}: {why}{detail}")
    for d in result.report.diagnostics:
        if d.is_error and d.plugin not in PLUGINS:
            console.say(f"  ! {d.code}: {d.message}")
    if outcome.not_loaded:
        console.say(
            "  The demo continues with what loaded; install the rest with `make demo` "
            "(it installs every pack) or, after `make dist`, "
            "pip install --find-links dist reyn-tools-<pack>."
        )
    return result.registry


async def run_router(
    registry: Any, client: LiteLLMClient, ctx: ToolContext, console: Console, outcome: DemoOutcome
) -> None:
    transcript = Transcript(console.out)
    loop = RouterLoop(
        registry, model=MODEL, ctx=ctx, client=client, max_turns=6, stream=True, on_event=transcript
    )
    console.say(f"  The model is offered {len(loop.tools())} tools (render_router); shell is phase-only.")
    console.say(f"  user> {ROUTER_PROMPT}")
    outcome.router = await loop.run(ROUTER_PROMPT)
    if outcome.router.status != "done":
        outcome.problems.append(f"the router conversation ended with status {outcome.router.status!r}")


async def run_phase(
    registry: Any, client: LiteLLMClient, ctx: ToolContext, console: Console, outcome: DemoOutcome
) -> None:
    transcript = Transcript(console.out)

    def on_event(event: SurfaceEvent) -> None:
        if event.kind == "contract_error":  # kept for "What happened"
            problems = [
                ln[2:] for ln in str(event.data.get("feedback", "")).splitlines() if ln.startswith("- ")
            ]
            outcome.contract_errors.append("; ".join(problems) or str(event.data.get("feedback", "")))
        transcript(event)

    runner = PhaseRunner(
        registry,
        model=MODEL,
        ctx=ctx,
        allowed_ops=list(PHASE_OPS),
        client=client,
        name="summarise-notes",
        artifact_type="release_summary",
        max_steps=8,
        instructions="Summarise the notes folder.",
        on_event=on_event,
    )
    console.say(f"  allowed_ops = {list(PHASE_OPS)} → ops: {', '.join(o.kind for o in runner.surface.ops)}")
    console.say(f"  task> {PHASE_TASK}")
    result = await runner.run(PHASE_TASK)
    while result.status == "suspended" and result.state is not None:
        console.say(f"  user answers: {ANSWER!r}  (resuming from the saved PhaseState)")
        result = await runner.resume(result.state, ANSWER)
    outcome.phase = result
    if result.status != "finish":
        outcome.problems.append(f"the phase ended with status {result.status!r}: {result.error}")


async def run_surfaces(
    registry: Any, client: LiteLLMClient, ctx: ToolContext, console: Console, outcome: DemoOutcome
) -> None:
    """Both surfaces in one event loop (the scripted model holds the docs page's address)."""
    console.step("router conversation: RouterLoop → litellm → scripted model (streaming)")
    await run_router(registry, client, ctx, console, outcome)
    console.step('phase "summarise-notes": PhaseRunner with the output contract')
    await run_phase(registry, client, ctx, console, outcome)


def summarise(root: Path, outcome: DemoOutcome, console: Console) -> None:
    console.say("\nWhat happened:")
    calls = list(outcome.router.tool_calls) if outcome.router else []
    ops = list(outcome.phase.op_results) if outcome.phase else []
    ok = sum(1 for c in calls if c.envelope.get("status") == "ok") + sum(
        1 for o in ops if o["result"].get("status") == "ok"
    )
    errors = [
        f"{c.name}: {describe_envelope(c.envelope, 90)}" for c in calls if c.envelope.get("status") != "ok"
    ]
    errors += [
        f"{o['kind']}: {describe_envelope(o['result'], 90)}" for o in ops if o["result"].get("status") != "ok"
    ]
    console.say(
        f"  {ok} tool calls and ops succeeded; {len(errors)} were refused or failed and went back to "
        "the model as errors:"
    )
    for e in errors:
        console.say(f"    - {e}")
    for c in outcome.contract_errors:
        console.say(
            f"  The phase's reply broke its output contract and was sent back with the error (its ops never "
            f"ran); the model corrected itself:\n    - {short(c, 150)}"
        )
    if outcome.phase is not None and outcome.phase.artifact is not None:
        console.say("  artifact: " + json.dumps(outcome.phase.artifact, ensure_ascii=False))
    summary = root / "out" / "summary.md"
    if summary.exists():
        console.say(f"  {summary.relative_to(root)}:")
        for line in summary.read_text(encoding="utf-8").splitlines():
            console.say(f"    | {line}")
    elif "file" in outcome.loaded:
        outcome.problems.append("out/summary.md was not written")


def run_demo(
    *,
    out: TextIO | None = None,
    workdir: Path | None = None,
    keep: bool = False,
    strict: bool = False,
    profile_template: Path | None = None,
) -> int:
    """Run the demo; return the exit code.

    Exit 1 when a step that could run failed (the router did not answer, the phase did not finish);
    with ``strict`` also when any of the packs or the example plugin did not load. A plugin that
    is not installed or fails to load is reported and the demo runs with the rest.
    """
    out = out or sys.stdout
    console = Console(out, steps=6)
    console.say(
        "Reyn demo — offline, no API key. Real components throughout: plugins loaded through a "
        "profile,\ntools working in a temporary workspace, an MCP server over stdio, and the "
        "litellm client\ntalking to a scripted model on 127.0.0.1. Only the model's words are scripted."
    )
    root = Path(workdir).resolve() if workdir else Path(tempfile.mkdtemp(prefix="reyn-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    outcome = DemoOutcome()
    try:
        console.step(f"workspace {root}")
        profile = prepare_workspace(root, profile_template)
        console.say(
            "  notes/todo.md, notes/meeting.md, skills/summarise-notes/SKILL.md, agents/editor.md, reyn.toml"
        )
        console.step(f"loading {profile.name}: plugins enabled {list(PLUGINS)}")
        registry = load_plugins(profile, console, outcome)
        console.step("one definition, three views: router, phase and MCP (`reyn mcp serve` over stdio)")
        from .views import show_views

        outcome.problems.extend(show_views(registry, profile, root, console.say))
        with docs_server() as docs_url:
            console.step(
                "starting the scripted model on 127.0.0.1 and importing litellm (takes a few seconds)"
            )
            t0 = time.monotonic()
            import_litellm()
            console.say(f"  litellm ready in {time.monotonic() - t0:.1f} s; docs page at {docs_url}")
            # the registry rides along: the source pack lists the enabled plugins from it
            ctx = ToolContext(surface="router", agent="demo", workspace=root, extras={"registry": registry})
            ops = {o.kind for o in render_phase(registry, phase_context(ctx, PHASE_OPS), PHASE_OPS).ops}
            model = DemoModel(RouterScript(docs_url), PhaseScript(ops))
            with ScriptedModelServer([model] * 40, model="reyn-demo-scripted", lifetime_s=600) as server:
                client = LiteLLMClient(api_base=server.base_url, api_key="demo-no-key", num_retries=0)
                asyncio.run(run_surfaces(registry, client, ctx, console, outcome))
        summarise(root, outcome, console)
    finally:
        if workdir is None and not keep:
            shutil.rmtree(root, ignore_errors=True)
        elif keep or workdir:
            console.say(f"\nThe workspace is kept at {root}")
    failed = list(outcome.problems)
    if strict and outcome.not_loaded:
        failed.append("not loaded: " + ", ".join(sorted(outcome.not_loaded)))
    for p in failed:
        console.say(f"demo problem: {p}")
    if not failed:
        console.say("\nDone.")
    return 1 if failed else 0
