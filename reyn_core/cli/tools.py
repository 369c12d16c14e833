"""``reyn tools list | render | search | call``: the registry the profile produces, as each surface
sees it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import EXIT_FAILED, EXIT_OK
from .completion import completes, tool_names
from .loading import emit, emit_json, load_from_args, split_ops, table, warn_load_errors
from .parser import add_command, add_group
from .reporting import json_mode, report_error
from .text_fields import printable_json, shown_lines

if TYPE_CHECKING:
    from ..context import ToolContext
    from ..loading.report import LoadResult
    from ..registry import ToolRegistry
    from ..tool import ToolDefinition

SURFACES = ("router", "phase")
SEARCH_LIMIT = 20  # the search tool's own bound on ``limit`` (a larger one would be refused by it)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    tsub = add_group(sub, common, "tools", "list, render and call the tools of the profile")
    lst = add_command(
        tsub, common, "list", run_list, "every registered tool and where it is visible", loads=True
    )
    lst.add_argument("--surface", choices=SURFACES, help="only the tools visible on this surface")
    ren = add_command(
        tsub, common, "render", run_render, "print what a model is sent for a surface", loads=True
    )
    ren.add_argument("--surface", choices=SURFACES, required=True)
    from reyn_core.provider_schemas import TARGETS

    ren.add_argument(
        "--target",
        choices=TARGETS,
        help="router: adapt each tool's schema for this provider (default openai); what cannot be "
        "adapted is a warning on stderr",
    )
    ren.add_argument(
        "--strict",
        action="store_true",
        help="router: OpenAI strict-mode schemas, the same as --target openai-strict (exit 1 if impossible)",
    )
    ren.add_argument(
        "--no-defer",
        action="store_true",
        help="router: ignore [surfaces.router.defer] and render every visible tool",
    )
    sea = add_command(
        tsub,
        common,
        "search",
        run_search,
        "rank the router tools for a request, with the search tool",
        loads=True,
        description="Call the router's search tool ([surfaces.router.defer] search_tool, by default the "
        "search pack's find_tools) as the router would: the best matches among the tools the router "
        "gates allow, and the words that matched.",
    )
    sea.add_argument("query", nargs="+", help="what the tool should do, in a few words")
    sea.add_argument(
        "--limit", type=int, default=5, help=f"how many tools to show (1-{SEARCH_LIMIT}, default 5)"
    )
    call = add_command(
        tsub, common, "call", run_call, "call one tool and print the dispatch envelope", loads=True
    )
    call.set_defaults(intermixed="pairs")
    completes(call.add_argument("name"), tool_names)
    call.add_argument(
        "pairs",
        nargs="*",
        metavar="KEY=VALUE",
        help="arguments one by one, each value read per the tool's schema (text for a string "
        "parameter, JSON otherwise: n=5 flag=true tags='[\"a\"]'), before, between or after the "
        "options; or one JSON object (like --args)",
    )
    call.add_argument(
        "--args", default=None, metavar="JSON", help="the arguments as a JSON object (default {})"
    )
    call.add_argument(
        "--surface",
        choices=(*SURFACES, "cli"),
        default="cli",
        help="gate the call as this surface (default cli, which follows the router gates)",
    )
    call.add_argument(
        "--approval",
        default=None,
        metavar="ID",
        help="run the call an operator approved (`reyn approvals approve ID`); it must be that exact call",
    )
    for p in (lst, ren, call):
        p.add_argument(
            "--allowed-ops",
            nargs="*",
            metavar="OP",
            help="phase allowed_ops (names, clusters, globs; space or comma separated); default from "
            "the profile",
        )


def _context(surface: str, result: LoadResult) -> ToolContext:
    """The context of the command's calls: agent ``cli`` in the load's workspace (``--workspace``)."""
    from ..context import ToolContext

    return ToolContext(surface=surface, agent="cli", workspace=Path(result.workspace))  # type: ignore[arg-type]


def _visibility(
    result: LoadResult, tool: ToolDefinition, surface: str, allowed_ops: tuple[str, ...] | None
) -> dict[str, Any]:
    from ..gates import check

    registry = result.registry
    d = check(
        tool,
        surface,
        _context(surface, result),
        registry=registry,
        allowed_ops=allowed_ops if surface == "phase" else None,
    )
    return {
        "visible": d.allowed,
        "layer": d.layer or None,
        "rule": d.rule or None,
        "reason": d.reason or None,
    }


def run_list(args: argparse.Namespace) -> int:
    result = load_from_args(args)
    warn_load_errors(result)
    registry = result.registry
    ops = split_ops(args.allowed_ops)
    deferral = _deferral(result)
    deferred = dict(deferral.split(_context("router", result)).reasons) if deferral is not None else {}
    rows: list[dict[str, Any]] = []
    for t in registry.tools():
        vis = {s: _visibility(result, t, s, ops) for s in SURFACES}
        if args.surface and not vis[args.surface]["visible"]:
            continue
        rows.append(
            {
                "name": t.name,
                "plugin": t.plugin_id,
                "original_name": registry.original_name(t.name),
                "cluster": t.cluster,
                "purity": t.purity,
                "dispatch_kind": t.dispatch_kind,
                "description": t.summary,
                **vis,
                "deferred": deferred.get(t.name),
            }
        )
    if not rows:
        where = f" visible on the {args.surface} surface" if args.surface else ""
        return emit(args, rows, f"no tools{where} (profile: {result.profile.describe_source()})")

    def mark(v: dict[str, Any], deferred: str | None = None) -> str:
        if deferred:
            return f"deferred ({deferred})"
        if v["visible"]:
            return "yes"
        return f"no ({v['layer']}: {v['rule']})" if v["rule"] else f"no ({v['layer']})"

    cells = [
        [
            r["name"],
            r["plugin"] or "(host)",
            r["cluster"],
            r["purity"],
            mark(r["router"], r["deferred"]),
            mark(r["phase"]),
        ]
        for r in rows
    ]
    return emit(args, rows, table(cells, ["NAME", "PLUGIN", "CLUSTER", "PURITY", "ROUTER", "PHASE"]))


def run_render(args: argparse.Namespace) -> int:
    if args.surface == "router" and args.allowed_ops is not None:
        return report_error("--allowed-ops applies to the phase surface only (the router has no allowed_ops)")
    if args.surface == "phase" and (args.strict or args.target):
        option = "--strict" if args.strict else "--target"
        return report_error(f"{option} applies to the router surface only (provider tool schemas)")
    if args.strict and args.target not in (None, "openai-strict"):
        return report_error(
            f"--strict is --target openai-strict; it cannot be combined with --target {args.target}"
        )
    target = "openai-strict" if args.strict else args.target or "openai"
    strict = target == "openai-strict"
    result = load_from_args(args)
    warn_load_errors(result)
    registry = result.registry
    if args.surface == "router":
        from ..render.router import StrictRenderError

        deferral = None if args.no_defer else _deferral(result)
        try:
            if deferral is None:
                from ..render.router import render_router

                tools = render_router(registry, _context("router", result), strict=strict, target=target)
            else:
                turn = deferral.split(_context("router", result), strict=strict, target=target)
                tools = turn.tools
                _note_deferred(turn.reasons, deferral.policy.search_tool)
        except StrictRenderError as exc:
            if not json_mode():
                for err in exc.errors:
                    print(f"reyn: error: {err}", file=sys.stderr)
                return EXIT_FAILED
            return report_error(
                str(exc), code="strict", exit_code=EXIT_FAILED, errors=[str(e) for e in exc.errors]
            )
        _warn_unadaptable(registry, tools, target)
        emit_json(tools)
        return EXIT_OK
    from dataclasses import asdict

    from reyn_core.render.phase_catalog import render_phase

    surface = render_phase(registry, _context("phase", result), split_ops(args.allowed_ops))
    if args.json:
        emit_json(
            {
                "allowed_ops": list(surface.allowed_ops),
                "ops": [asdict(o) for o in surface.ops],  # kind, description, args_schema, purity, ...
                "output_schema": surface.output_schema,
                "prompt_text": surface.prompt_text(),
            }
        )
        return EXIT_OK
    # Both halves of what a phase model is sent: the catalogue (system prompt) and the output contract
    # (response_format where the model supports it, else appended to the prompt; see PhaseRunner).
    print(shown_lines(surface.prompt_text()))  # the descriptions' controls escaped (JSON: as sent)
    print("\nJSON Schema of the reply (the phase output contract):")
    print(printable_json(surface.output_schema))
    return EXIT_OK


def _warn_unadaptable(registry: ToolRegistry, tools: list[dict[str, Any]], target: str) -> None:
    """One stderr line per rendered tool whose schema ``target`` cannot take whole (strict mode
    already failed loudly; the other targets render and say what they dropped)."""
    from reyn_core.provider_schemas import adapt_parameters

    if target in ("openai-strict", "mcp", "openai", "anthropic"):
        return
    for entry in tools:
        name = entry["function"]["name"]
        if name not in registry:
            continue
        for problem in adapt_parameters(registry.get(name).parameters, target).problems:
            print(f"reyn: warning: tool {name!r} for {target}: {problem}", file=sys.stderr)


def _deferral(result: Any) -> Any:
    """The profile's ``ToolDeferral`` over the loaded registry, or None when nothing is deferred.
    Raises ``ProfileError`` for names in ``[surfaces.router.defer]`` that match nothing loaded."""
    from ..deferral import ToolDeferral

    policy = result.deferral
    return ToolDeferral(result.registry, policy) if policy.active else None


def _note_deferred(reasons: Any, search_tool: str) -> None:
    """What the array leaves out, on stderr (stdout stays exactly the array a model is sent)."""
    if not reasons:
        return
    listed = ", ".join(f"{name} ({why})" for name, why in reasons.items())
    print(
        f"reyn: {len(reasons)} tool(s) deferred by [surfaces.router.defer], not in this array but found "
        f"through {search_tool!r} (try `reyn tools search QUERY`): {listed}",
        file=sys.stderr,
    )


def run_search(args: argparse.Namespace) -> int:
    """Call the profile's search tool (``[surfaces.router.defer] search_tool``) through the one
    dispatcher, as the router would: the core ranks nothing itself."""
    import asyncio
    from dataclasses import replace

    from ..deferral import missing_search_tool
    from ..dispatch import dispatch_tool
    from .search_results import search_rows, search_table

    if not 1 <= args.limit <= SEARCH_LIMIT:
        return report_error(f"--limit must be between 1 and {SEARCH_LIMIT}, got {args.limit}")
    result = load_from_args(args)
    warn_load_errors(result)
    policy = result.deferral
    problem = missing_search_tool(result.registry, policy.search_tool)
    if problem is not None:
        return report_error(f"reyn tools search: {problem}", exit_code=EXIT_FAILED)
    deferral = _deferral(result)
    ctx = replace(_context("router", result), extras={"registry": result.registry})
    deferred = dict(deferral.split(ctx).reasons) if deferral is not None else {}
    query = {"query": " ".join(args.query), "limit": args.limit}
    envelope = asyncio.run(dispatch_tool(result.registry, policy.search_tool, query, ctx))
    if envelope["status"] != "ok":
        return report_error(f"reyn tools search: {envelope['error']['message']}", exit_code=EXIT_FAILED)
    try:
        rows = search_rows(envelope["data"], deferred, policy.search_tool)
    except ValueError as exc:
        return report_error(f"reyn tools search: {exc}", exit_code=EXIT_FAILED)
    if not rows:
        profile = result.profile.describe_source()
        return emit(args, rows, f"no visible router tool matches (profile: {profile})")
    return emit(args, rows, search_table(rows))


def run_call(args: argparse.Namespace) -> int:
    import asyncio
    from dataclasses import replace

    from ..dispatch import dispatch_tool

    if args.allowed_ops:
        # ``--allowed-ops`` takes every word up to the next option; an op name, cluster or glob never
        # holds "=", so a KEY=VALUE word after it is an argument (``--allowed-ops file path=a.md``).
        args.pairs.extend(w for w in args.allowed_ops if "=" in w)
        args.allowed_ops = [w for w in args.allowed_ops if "=" not in w]
    if args.surface != "phase" and args.allowed_ops is not None:
        return report_error("--allowed-ops applies to --surface phase only")
    if len(args.pairs) == 1 and args.pairs[0].lstrip().startswith("{"):
        if args.args is not None:
            return report_error("give the arguments either as --args JSON or as one JSON object, not both")
        args.args, args.pairs = args.pairs[0], []  # `reyn tools call NAME '{"path": "a.md"}'`
    if args.pairs and args.args is not None:
        return report_error("give the arguments either as --args JSON or as KEY=VALUE pairs, not both")
    result = load_from_args(args)
    warn_load_errors(result)
    if args.pairs:
        from .call_arguments import pairs_to_arguments, parameters_of

        try:
            arguments: Any = pairs_to_arguments(args.pairs, parameters_of(result.registry, args.name))
        except ValueError as exc:
            return report_error(str(exc))
    else:
        arguments = args.args if args.args is not None else "{}"
    # The host's registry rides in the context, as tools that read the session need it (to check the
    # tool names a model gives, to list the enabled plugins).
    ctx = replace(_context(args.surface, result), extras={"registry": result.registry})
    allowed = split_ops(args.allowed_ops) if args.surface == "phase" else None

    async def reported(approval: str | None) -> dict[str, Any]:
        from .call_progress import call_reporter

        reporter, shown = call_reporter(args.name)
        try:
            return await dispatch_tool(
                result.registry,
                args.name,
                arguments,
                ctx.with_reporter(reporter),
                surface=args.surface,
                allowed_ops=allowed,
                approval=approval,
            )
        finally:
            await reporter.drain()
            shown.clear()

    def call(approval: str | None) -> dict[str, Any]:
        return asyncio.run(reported(approval))

    envelope = call(args.approval)
    error = envelope.get("error") or {}
    if error.get("kind") == "approval_required":
        from ..approvals.terminal import approve_on_terminal

        envelope = approve_on_terminal(result.registry, envelope, call)
    if (envelope.get("error") or {}).get("kind") == "not_found":
        # The operator learns which plugin and why; a model never gets host_hint (docs/decisions.md).
        from reyn_core.loading.unavailable import explain_unavailable_tool

        hint = explain_unavailable_tool(result, args.name)
        if hint is not None:
            envelope = {**envelope, "host_hint": hint.to_json()}
            print(f"reyn: {hint.message}", file=sys.stderr)
    emit_json(envelope)
    return EXIT_OK if envelope.get("status") == "ok" else EXIT_FAILED
