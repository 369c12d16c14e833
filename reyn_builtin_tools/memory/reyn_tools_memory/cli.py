"""``reyn memory export DIR`` / ``reyn memory import DIR`` (contributed through ``reyn_cli_commands``)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reyn_core import command_parser, settings_as

from .backend import MemoryBackend, MemoryStoreError
from .export_folder import ExportRefused
from .opening import open_store
from .settings import MemorySettings
from .transfer import export_store, import_folder


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "reyn memory",
        description="Export or import the memory store as Markdown files.",
        option_help={
            "--workspace": "the workspace whose store to use: a relative store path in the profile is "
            "resolved against it, as the memory tools resolve it (default: the current directory)"
        },
    )
    parser.add_argument(
        "--db",
        help="use the SQLite store in this file (default: the store the profile configures, "
        "else .reyn/memory.db)",
    )
    parser.add_argument(
        "--postgres",
        metavar="ENV",
        help="use the PostgreSQL store whose connection string is in the environment variable ENV "
        "(e.g. REYN_MEMORY_DSN); with --db, moves a store between backends in two steps",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    exp = sub.add_parser("export", help="write one Markdown file per entry under DIR")
    exp.add_argument("dir", type=Path)
    imp = sub.add_parser("import", help="read every Markdown file under DIR into the store (all or nothing)")
    imp.add_argument("dir", type=Path)
    imp.add_argument("--check", action="store_true", help="only check the files; write nothing")
    return parser


def _profile_settings(loaded: Any) -> MemorySettings:
    """``[plugins.memory.settings]`` as the load validated them (the profile ``reyn`` was given with
    ``--profile`` / ``--profile-file``, else the usual search); defaults without a settings table."""
    return settings_as(loaded.plugin_settings("memory") if loaded is not None else None, MemorySettings)


def _settings(args: argparse.Namespace, loaded: Any) -> MemorySettings:
    """``--db FILE`` or ``--postgres ENV`` (with default limits), else the profile's settings."""
    if args.db and args.postgres:
        raise MemoryStoreError("--db (SQLite) and --postgres (PostgreSQL) name two stores; give one")
    if args.db:
        return MemorySettings(backend="sqlite", path=str(Path(args.db).absolute()))
    if args.postgres:
        return MemorySettings(backend="postgres", dsn_env=args.postgres)
    return _profile_settings(loaded)


def _store(args: argparse.Namespace, loaded: Any) -> tuple[MemoryBackend, MemorySettings]:
    settings = _settings(args, loaded)
    # The load's workspace (``--workspace``, else the current directory), where the tools open the
    # store: a relative path in the profile names the same file for both.
    workspace = Path(getattr(loaded, "workspace", "") or Path.cwd())
    return open_store(settings, workspace), settings


def memory_command(argv: Sequence[str], loaded: Any) -> int:
    """Run ``reyn memory ...`` against the store of ``loaded`` (the ``LoadResult`` ``reyn`` handed the
    command) unless ``--db`` / ``--postgres`` name one; returns the exit code (0 ok, 1 invalid files,
    2 usage or store error)."""
    args = _parser().parse_args(list(argv))  # a usage error is reyn's to report (exit 2)
    try:
        store, settings = _store(args, loaded)
        if args.action == "export":
            return _export(store, args)
        return _import(store, settings, args)
    except (MemoryStoreError, ExportRefused) as exc:
        print(f"reyn memory: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a profile error or an unreadable folder: one line, no traceback
        print(f"reyn memory: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


def _export(store: MemoryBackend, args: argparse.Namespace) -> int:
    if args.dir.exists() and not args.dir.is_dir():
        print(f"reyn memory: error: {args.dir} exists and is not a folder", file=sys.stderr)
        return 2
    if not store.exists():
        print(f"reyn memory: error: no memory store at {store.location}", file=sys.stderr)
        return 2
    written = export_store(store, args.dir)
    if args.json:
        print(
            json.dumps({"exported": len(written), "dir": str(args.dir), "files": [str(p) for p in written]})
        )
    else:
        print(f"exported {len(written)} entries from {store.location} to {args.dir}")
    return 0


def _import(store: MemoryBackend, settings: MemorySettings, args: argparse.Namespace) -> int:
    if not args.dir.is_dir():
        print(f"reyn memory: error: {args.dir} is not a folder", file=sys.stderr)
        return 2
    if args.check:
        from .transfer import read_folder

        entries, problems = read_folder(args.dir, settings)
        results: list[Any] = []
    else:
        results, problems = import_folder(store, args.dir, settings)
    if problems:
        if args.json:
            print(json.dumps({"imported": 0, "problems": [p.render() for p in problems]}))
        for p in problems:
            print(f"reyn memory: {p.render()}", file=sys.stderr)
        print(f"reyn memory: {len(problems)} file(s) are invalid; nothing was imported", file=sys.stderr)
        return 1
    created = sum(r.status == "created" for r in results)
    if args.json:
        out = {"imported": len(results), "created": created, "updated": len(results) - created}
        if args.check:
            out = {"checked": len(entries), "problems": []}
        print(json.dumps(out))
    elif args.check:
        print(f"{len(entries)} entries in {args.dir} are valid")
    else:
        print(
            f"imported {len(results)} entries into {store.location} "
            f"({created} created, {len(results) - created} updated)"
        )
    return 0
