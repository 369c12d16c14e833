"""``reyn mcp serve``, the command: its options (``parser``), their checks, the served registry
wrapped for the calling agent (``load_served``), what is served reported on stderr
(``report_load``), then the server run on stdio or streamable HTTP until it stops (``main``)."""

from __future__ import annotations

import argparse
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reyn_core import ToolContext, command_parser

from .serve import DEFAULT_MAX_CONCURRENT_CALLS, ServedRegistry, build_server
from .serve_elicitation import DEFAULT_ANSWER_TIMEOUT_S, elicitation_bridge

log = logging.getLogger("reyn.mcp.serve")

DEFAULT_AGENT = "mcp"


@dataclass(frozen=True)
class ServeOptions:
    """What ``reyn mcp serve`` was asked for (parsed options)."""

    agent: str = DEFAULT_AGENT
    workspace: Path = field(default_factory=Path.cwd)
    max_concurrent_calls: int = DEFAULT_MAX_CONCURRENT_CALLS
    answer_timeout_s: float = DEFAULT_ANSWER_TIMEOUT_S


def load_served(options: ServeOptions, loaded: Any) -> tuple[ServedRegistry, Any]:
    """Wrap the frozen registry of ``loaded`` (the ``LoadResult`` ``reyn`` handed the command:
    discovery, provenance, ``[lock] enforce``, settings and registration already ran, once) for
    ``options.agent``. Returns it with that ``LoadResult``."""
    result = loaded
    ctx = ToolContext(
        surface="router",
        agent=options.agent,
        workspace=options.workspace,
        bridge=elicitation_bridge(),
        extras={"registry": result.registry, "served_by": "mcp"},
    )
    served = ServedRegistry(
        result.registry, ctx, options.max_concurrent_calls, answer_timeout_s=options.answer_timeout_s
    )
    return served, result


def report_load(served: ServedRegistry, result: Any) -> None:
    """What is served, what was refused, and the deferred tools' condition — on stderr (the log).

    Schema warnings name only tools this server serves; the provider ones (``RS101`` OpenAI strict
    mode, ``RS102`` Gemini) are about rendering for a model provider, not MCP, whose clients get the
    schema as registered, and are left to ``reyn doctor``."""
    names = [t.name for t in served.tools(True)]  # at start-up; each tools/list asks anew
    served_names = set(names)
    for d in result.report.diagnostics:
        if d.code in ("RS101", "RS102") or (d.code.startswith("RS1") and d.tool not in served_names):
            continue
        if d.severity in ("error", "warning"):
            log.warning("%s", d.render())
    refused = [p.plugin_id for p in result.report.plugins if p.enabled and p.status != "loaded"]
    if refused:
        log.warning("not served (plugin %s): see `reyn doctor`", ", ".join(refused))
    log.info("serving %d tools to agent %r: %s", len(names), served.ctx.agent, ", ".join(names) or "(none)")
    if served.deferred:
        log.info(
            "deferred tools %s are listed only to clients that declare elicitation",
            ", ".join(served.deferred),
        )


def parser() -> argparse.ArgumentParser:
    """The options of ``reyn mcp serve``."""
    p = command_parser(
        "reyn mcp serve",
        description="Serve the tools the router surface offers an agent to any MCP client: stdio by "
        "default, streamable HTTP at /mcp with --http. Every call goes through Reyn's dispatcher "
        "(gates, argument validation, policy hooks, timeout, audit log).",
        option_help={
            "--workspace": "workspace root for tools (default: the current directory, unless that is / or "
            "your home directory, where MCP clients start servers: then this option is required)"
        },
    )
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        help=f"the calling agent the gates and per-agent allowlists see (default {DEFAULT_AGENT!r})",
    )
    p.add_argument(
        "--max-concurrent-calls",
        type=int,
        default=DEFAULT_MAX_CONCURRENT_CALLS,
        help=f"tool calls running at once; more wait (default {DEFAULT_MAX_CONCURRENT_CALLS})",
    )
    p.add_argument(
        "--answer-timeout",
        type=float,
        default=DEFAULT_ANSWER_TIMEOUT_S,
        metavar="SECONDS",
        help="how long a call waits for its user's answer (elicitation), and how long a 2026-07-28 "
        f"requestState is honoured; then it is denied (default {DEFAULT_ANSWER_TIMEOUT_S:g})",
    )
    from .serve_http_options import add_http_options
    from .serve_stop import add_stop_options

    add_stop_options(p)
    add_http_options(p)
    return p


def main(argv: list[str], loaded: Any) -> int:
    """Entry point of ``reyn mcp serve`` with the ``LoadResult`` ``reyn`` handed the command. Returns
    2 on usage or load errors; once serving, the process exits when the stop ends (``serve_stop``):
    0 after a clean stop, ``EXIT_ABANDONED`` after abandoning calls."""
    from reyn_core import ReynError

    from .serve_http import serve_http
    from .serve_http_options import MIN_REQUEST_BYTES, MIN_REQUEST_VALUES, HttpOptionsError, http_options
    from .serve_stop import grace_problem

    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="reyn mcp serve: %(message)s", stream=sys.stderr)
    if args.max_concurrent_calls < 1:
        print("reyn mcp serve: error: --max-concurrent-calls must be at least 1", file=sys.stderr)
        return 2
    if not 0 < args.answer_timeout < float("inf"):  # also refuses nan: every wait ends
        print(
            "reyn mcp serve: error: --answer-timeout must be a finite positive number of seconds",
            file=sys.stderr,
        )
        return 2
    if (problem := grace_problem(args.shutdown_grace)) is not None:
        print(f"reyn mcp serve: error: {problem}", file=sys.stderr)
        return 2
    for option, value, least in (
        ("--max-request-bytes", args.max_request_bytes, MIN_REQUEST_BYTES),
        ("--max-request-values", args.max_request_values, MIN_REQUEST_VALUES),
    ):
        if value < least:
            print(f"reyn mcp serve: error: {option} must be at least {least}", file=sys.stderr)
            return 2
    from reyn_core.host import choose_workspace

    try:
        workspace = choose_workspace(args.workspace)
        load_ws = getattr(loaded, "workspace", "")
        if load_ws and workspace != Path(load_ws):  # fail closed: the tools work where the load protects
            raise ReynError(f"the tools' workspace {workspace} is not the load's {load_ws}")
    except ReynError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    try:
        http = http_options(args) if args.http else None
    except HttpOptionsError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    options = ServeOptions(
        agent=args.agent,
        workspace=workspace,
        max_concurrent_calls=args.max_concurrent_calls,
        answer_timeout_s=args.answer_timeout,
    )
    try:
        served, result = load_served(options, loaded)
    except ReynError as exc:
        print(f"reyn mcp serve: error: {exc}", file=sys.stderr)
        return 2
    report_load(served, result)
    server = build_server(served, version=_version())
    if http is not None:
        return serve_http(server, served, http)
    from .serve_stdio import serve_stdio
    from .serve_stop import run_until_stopped

    async def serving() -> int:
        await serve_stdio(
            server, served, args.shutdown_grace, args.max_request_bytes, args.max_request_values
        )
        return 0

    run_until_stopped(served, serving())  # exits: 0 after a clean stop, 3 after abandoning calls


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("reyn-tools-mcp")
    except Exception:
        return ""


__all__ = ["ServeOptions", "load_served", "main", "parser", "report_load"]
