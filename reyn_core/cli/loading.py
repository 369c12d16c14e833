"""What every ``reyn`` command shares: the profile and load from the common options, and output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core.loading.loader import Review
    from reyn_core.loading.report import LoadResult
    from reyn_core.loading.step1_profile.profile import Profile

    from .global_options import GlobalOptions


def profile_from_args(args: argparse.Namespace | GlobalOptions) -> Profile:
    """The profile selected by ``--profile-file`` / ``--profile`` (or their environment defaults)."""
    from reyn_core.loading.step1_profile.profile import load_profile

    return load_profile(
        profile_file=getattr(args, "profile_file", None), profile_name=getattr(args, "profile", None)
    )


def load_from_args(
    args: argparse.Namespace | GlobalOptions,
    *,
    review: Review | None = None,
    inspect_discovered: bool = False,
    check_profile: bool = True,
    profile: Profile | None = None,
) -> LoadResult:
    """Run the loader on the selected profile (``profile``, when the caller has read it already).
    ``review`` (``plugins lock`` and ``plugins audit``, which must see the installed world as it is)
    ignores ``[lock] enforce`` for the plugins, re-hashes every file, records the extensions without
    importing them (``loader.load``) and exports no spans. ``check_profile`` applies
    ``check_loaded_profile`` (``doctor`` reports those findings itself)."""
    from reyn_core.loading.loader import load

    if isinstance(args, argparse.Namespace) and "workspace" not in args:
        # a built-in command that loads takes --workspace: declared by add_command(loads=True)
        raise TypeError(f"{getattr(args, 'func', None)} loads plugins but is not declared with loads=True")
    profile = profile if profile is not None else profile_from_args(args)
    if review is None:
        export_spans(profile)  # before the load, so its own spans are exported
    workspace = getattr(args, "workspace", None)  # a command's --workspace: where its tools work
    result = load(profile, inspect_discovered=inspect_discovered, review=review, workspace=workspace or None)
    print_load_tracebacks(result, getattr(args, "traceback", False))
    if check_profile:
        check_loaded_profile(result)
    return result


def export_spans(profile: Profile) -> bool:
    """Have the tracing add-on export this process's spans if the profile turns tracing on; returns
    whether an exporter was set up.

    A library host sets up its own exporter; the ``reyn`` command is its own host, so when its
    profile turns tracing on (``[observability] tracing = true``) the tracing add-on (reyn-otel, found
    by its ``reyn.tracing`` entry point) sets up its exporter from the environment, before the load.
    Without the add-on the load says so (``RC012``)."""
    if profile.observability.tracing is not True:
        return False
    from reyn_core.loading.loader import load_session
    from reyn_core.loading.tracing_addon import tracing_addon

    # its own lookup (pinned by the enforced lock as the load's is); without one, the load's RC012 says
    # what to install
    addon, _ = tracing_addon(load_session(profile).extensions)
    return False if addon is None else bool(addon.export_spans())


# Profile findings every command that loads reports on stderr (not only ``doctor``): a table for a
# plugin that is not enabled (RC004, most often a typo such as [plugins.weathr.settings]) and a key
# a settings model ignores (RC008).
_PROFILE_WARNINGS = ("RC004", "RC008")


def check_loaded_profile(result: LoadResult) -> None:
    """What every command that loads says about the profile itself.

    An enabled id that no installed plugin provides but that is close to one that is installed
    (``enable = ["fiel"]`` with ``file`` installed) is a typo in what the profile enables: a
    ``ProfileError`` (code ``RD001``, CLI exit 2) naming the near miss, before anything runs. An
    enabled id close to nothing is a plugin not installed here: the load reports it (``RD001``) and
    the rest works. Tables for plugins that are not enabled are one warning line each.
    """
    import difflib

    from reyn_core.errors import ProfileError
    from reyn_core.loading.step2_discovery.discovery import discover

    installed = sorted(discover().by_id())
    typos = []
    for info in result.report.plugins:
        if info.enabled and info.status == "missing":
            close = difflib.get_close_matches(info.plugin_id, installed, n=2)
            if close:
                typos.append(f"{info.plugin_id!r} (did you mean {' or '.join(map(repr, close))}?)")
    if typos:
        error = ProfileError(
            f"{result.profile.describe_source()}: plugins.enable names {', '.join(typos)}, which no "
            f"installed plugin provides (installed: {', '.join(installed) or 'none'})",
            key="plugins.enable",
            file=result.profile.source,
        )
        error.code = "RD001"
        raise error
    for d in result.report.diagnostics:
        if d.code in _PROFILE_WARNINGS:
            print(f"reyn: warning: {d.render()}", file=sys.stderr)


def print_load_tracebacks(result: LoadResult, requested: bool) -> None:
    """With ``--traceback`` or ``REYN_DEBUG=1``: the full traceback behind each load diagnostic that
    has one (a plugin that failed to import), on stderr; stdout stays the command's output."""
    import os

    if not (requested or os.environ.get("REYN_DEBUG")):
        return
    for d in result.report.diagnostics:
        if d.traceback:
            print(f"reyn: traceback of {d.render()}\n{d.traceback.rstrip()}", file=sys.stderr)


def emit_json(value: Any) -> None:
    """Print ``value`` as indented, deterministic JSON."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def emit(args: argparse.Namespace, data: Any, text: str) -> int:
    """A command's output: ``data`` as JSON with ``--json``, else ``text``; the command succeeded."""
    if args.json:
        emit_json(data)
    else:
        print(text)
    return 0


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A plain left-aligned text table; every cell ``shown`` (``text_fields``): one line, nothing a
    terminal would act on."""
    from .text_fields import shown

    cols = [[shown(c) for c in header], *[[shown(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cols) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cols]
    return "\n".join(lines)


def split_ops(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """``--allowed-ops a b,c`` → ``("a", "b", "c")``; None when the option was not given."""
    if values is None:
        return None
    return tuple(op.strip() for v in values for op in v.split(",") if op.strip())


def warn_load_errors(result: Any) -> None:
    """One stderr line when the load had errors, so `tools` output is never silently partial. It says
    tools may be missing only when one may be: an enabled plugin did not load, or an error concerns a
    plugin or a tool. An error about neither (the remote failure log refused, ``RC013``; the approval
    store, ``RC011``) leaves every tool in, and the line says so."""
    report = result.report
    errors = [d for d in report.diagnostics if d.severity == "error"]
    if errors:
        codes = ", ".join(sorted({d.code for d in errors}))
        left_out = any(p.enabled and p.status != "loaded" for p in report.plugins) or any(
            d.plugin or d.tool for d in errors
        )
        what = "some tools may be missing" if left_out else "every enabled plugin and its tools loaded"
        print(
            f"reyn: warning: {len(errors)} load error(s) ({codes}); {what} — run `reyn doctor`",
            file=sys.stderr,
        )
