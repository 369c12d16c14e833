"""``reyn-demo``: the main job, offline and without an API key."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

DESCRIPTION = """\
The offline end-to-end demo: it writes its own profile into a temporary workspace (every pack
and the example plugin), loads it through the real loader and runs both LLM surfaces against a
scripted model on 127.0.0.1.

Exit codes: 0 every step that could run succeeded; 1 a step failed (with --strict also: a plugin
did not load); 2 usage error."""


def build_parser() -> argparse.ArgumentParser:
    """The ``reyn-demo`` argument parser."""
    p = argparse.ArgumentParser(
        prog="reyn-demo",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--workdir", help="run in this folder and keep it (default: a temporary folder, removed)")
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace and print its path")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless every pack and the example plugin loaded and every step ran",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reyn-demo`` console script. Returns the exit code."""
    args = build_parser().parse_args(argv)
    from reyn_core import ReynError

    from .runner import run_demo

    try:
        return run_demo(
            workdir=Path(args.workdir) if args.workdir else None, keep=args.keep, strict=args.strict
        )
    except ReynError as exc:
        print(f"reyn-demo: error: {exc}", file=sys.stderr)
        return 2
