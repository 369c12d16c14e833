"""``reyn demo`` — the main job, offline and without an API key (see ``reyn_core.surfaces.demo``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

DESCRIPTION = """\
The offline end-to-end demo: it writes its own profile into a temporary workspace (the six packs
and the example plugin), so --profile, --profile-file and --json do not apply and are refused.

Exit codes: 0 every step that could run succeeded; 1 a step failed (with --strict also: a plugin
did not load); 2 usage error."""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    # No `common` parent: the demo brings its own profile and prints a transcript, never JSON.
    p = sub.add_parser(
        "demo",
        help="run the offline end-to-end demo (no API key needed)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--workdir", help="run in this folder and keep it (default: a temporary folder, removed)")
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace and print its path")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless all six packs and the example plugin loaded and every step ran",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import ReynError

    given = [
        flag
        for flag, value in (
            ("--profile", args.profile),
            ("--profile-file", args.profile_file),
            ("--json", args.json),
        )
        if value
    ]
    if given:  # e.g. `reyn --json demo`: the top-level options reach every command
        raise ReynError(
            f"reyn demo does not take {', '.join(given)}: it writes and uses its own profile "
            "and prints a transcript"
        )
    from ..surfaces.demo.runner import run_demo

    return run_demo(workdir=Path(args.workdir) if args.workdir else None, keep=args.keep, strict=args.strict)
