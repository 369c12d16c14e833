"""``reyn doctor``: every diagnostic of the profile's load, with its fix. Exit 1 when any is an error."""

from __future__ import annotations

import argparse
from typing import Any

from ..remote_log import ENV_VAR, LOGGER, remote_log_destination
from . import EXIT_FAILED, EXIT_OK
from .loading import emit_json, load_from_args
from .parser import add_command
from .reporting import report_error
from .text_fields import shown


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    add_command(sub, common, "doctor", run, "all load diagnostics with fixes; exit 1 on errors", loads=True)


def run(args: argparse.Namespace) -> int:
    from reyn_core.code_table import CODES, CodeTableError

    try:
        CODES.check()  # the load's first step: without the core's code table no load can run
    except CodeTableError as exc:
        return report_error(str(exc), code="RD007", exit_code=EXIT_FAILED)
    result = load_from_args(args, check_profile=False)
    report = result.report
    from .plugin_commands import usable_commands

    _, command_diags = usable_commands(result)
    diagnostics = [*report.diagnostics, *command_diags, *_near_misses(), *_backend_code_table()]
    errors = sum(1 for d in diagnostics if d.is_error)
    warnings = sum(1 for d in diagnostics if d.severity == "warning")
    enabled = [p for p in report.plugins if p.enabled]
    loaded = [p for p in enabled if p.status == "loaded"]
    if args.json:
        emit_json(
            {
                "profile": result.profile.source,
                "profile_name": result.profile.name,
                "ok": errors == 0,
                "plugins": {p.plugin_id: p.status for p in report.plugins if p.enabled},
                "tools": len(result.registry),
                "diagnostics": [d.to_json() for d in diagnostics],
                "remote_log": remote_log_destination(),
            }
        )
        return EXIT_FAILED if errors else EXIT_OK
    print(f"profile: {result.profile.describe_source()}")
    print(
        f"plugins: {len(loaded)} of {len(enabled)} enabled loaded; "
        f"{sum(1 for p in report.plugins if not p.enabled)} installed but not enabled; "
        f"{len(result.registry)} tool(s)"
    )
    # where a remote server's own words (stderr, error bodies) go: never to a model
    refused = any(d.code == "RC013" for d in diagnostics)
    refused_note = " — refused (RC013 below): standard error until it is fixed" if refused else ""
    print(f"remote failure details: {remote_log_destination()}{refused_note} (${ENV_VAR}; logger {LOGGER})")
    if not diagnostics:
        print("no problems found")
        return EXIT_OK
    for d in diagnostics:
        print(shown(d.render()))  # a plugin's or a remote server's words: escaped
    print(f"{errors} error(s), {warnings} warning(s)")
    return EXIT_FAILED if errors else EXIT_OK


def _near_misses() -> list[Any]:
    """RD005 for each installed distribution whose entry-point group is almost ``reyn.plugins``:
    its plugins are invisible to discovery, which is silent about groups it does not read."""
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.step2_discovery.discovery import GROUP, discover

    return [
        Diagnostic.make(
            "RD005",
            f"{m.distribution} {m.version} declares entry point(s) {', '.join(m.names) or '(none)'} in group "
            f"{m.group!r}, not {GROUP!r}, so Reyn does not see them",
            plugin=m.names[0] if len(m.names) == 1 else None,
        )
        for m in discover().near_misses
    ]


def _backend_code_table() -> list[Any]:
    """RD007 when the installed isolation backend's code table is damaged: read without importing the
    backend (a load imports it, verified, only for its first isolated plugin, and says so then)."""
    import importlib.util

    from reyn_core.code_table import CodeTable, CodeTableError
    from reyn_core.loading.diagnostics import Diagnostic
    from reyn_core.loading.isolation_point import ISOLATION_DISTRIBUTION

    package = ISOLATION_DISTRIBUTION.replace("-", "_")
    if importlib.util.find_spec(package) is None:
        return []
    try:
        CodeTable(package).check()
    except CodeTableError as exc:
        return [Diagnostic.make("RD007", str(exc))]
    return []
