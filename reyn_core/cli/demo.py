"""``reyn demo`` — the main job, offline and without an API key (see ``reyn_core.surfaces.demo``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", parents=[common], help="run the offline end-to-end demo (no API key needed)")
    p.add_argument("--workdir", help="run in this folder and keep it (default: a temporary folder, removed)")
    p.add_argument("--keep", action="store_true", help="keep the temporary workspace and print its path")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 unless all six packs and the example plugin loaded and every step ran")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..surfaces.demo.runner import run_demo

    return run_demo(workdir=Path(args.workdir) if args.workdir else None, keep=args.keep, strict=args.strict)
