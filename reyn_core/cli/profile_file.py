"""Editing the profile file: ``reyn init`` and ``reyn plugins enable | disable``.

Edits go through tomlkit, a round-tripping TOML library, so every comment, blank line and key order
the operator wrote survives; the edited text is validated as a profile before it is written
(atomically), so a command never leaves a file the loader would refuse.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ReynError
from . import EXIT_OK
from .loading import emit, emit_json
from .parser import add_command


def _installed() -> dict[str, tuple[str, str]]:
    """Installed plugin id → (distribution, version), from metadata only (nothing is imported)."""
    from reyn_core.loading.step2_discovery.discovery import discover

    return {
        c.plugin_id: (c.distribution, c.version)
        for c in sorted(discover().plugins, key=lambda c: c.plugin_id)
    }


def _target(args: argparse.Namespace) -> tuple[Path, bool]:
    """The profile file the loader would read for these options, and whether it is a pyproject."""
    from reyn_core.loading.step1_profile.profile import PROFILE_FILE_NAME, find_profile_file

    if getattr(args, "profile", None):
        raise ReynError(
            "`reyn plugins enable/disable` edit the base [plugins] enable list; a named profile "
            f"([profiles.{args.profile}]) is edited by hand"
        )
    found = find_profile_file(getattr(args, "profile_file", None))
    return found if found is not None else (Path.cwd() / PROFILE_FILE_NAME, False)


def _unknown_ids(ids: Sequence[str], installed: dict[str, tuple[str, str]]) -> str | None:
    problems = []
    for plugin_id in ids:
        if plugin_id in installed:
            continue
        close = difflib.get_close_matches(plugin_id, list(installed), n=1, cutoff=0.6)
        problems.append(f"{plugin_id!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    if not problems:
        return None
    known = ", ".join(installed) or "none"
    return f"no installed plugin {', '.join(problems)}; installed: {known}"


def _write_checked(path: Path, text: str, is_pyproject: bool) -> None:
    """Validate ``text`` as the profile it will be, then write it atomically."""
    import tomlkit

    from reyn_core.atomic_write import atomic_write_bytes
    from reyn_core.loading.step1_profile.profile import Profile

    data = tomlkit.parse(text).unwrap()
    section = data.get("tool", {}).get("reyn", {}) if is_pyproject else data
    Profile.from_mapping(section, source=str(path), base_dir=path.resolve().parent)
    try:
        atomic_write_bytes(path, text.encode("utf-8"), through_link=True)  # read and parsed just before
    except OSError as exc:
        raise ReynError(f"cannot write {path}: {exc.strerror or exc}") from None


def edit_enabled(args: argparse.Namespace, ids: Sequence[str], *, enable: bool) -> int:
    """Add ``ids`` to (or remove them from) ``[plugins] enable``, keeping the file's layout."""
    import tomlkit

    path, is_pyproject = _target(args)
    created = not path.exists()
    text = "" if created else path.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ReynError(f"{path}: not valid TOML ({exc}); fix it before editing") from None
    root: Any = doc
    if is_pyproject:
        root = doc.setdefault("tool", tomlkit.table()).setdefault("reyn", tomlkit.table())
    plugins = root.get("plugins")
    if plugins is None:
        plugins = tomlkit.table()
        root["plugins"] = plugins
    current = plugins.get("enable")
    if current is None:
        current = tomlkit.array()
        plugins["enable"] = current
    if not isinstance(current, list) or not all(isinstance(x, str) for x in current):
        raise ReynError(f"{path}: [plugins] enable must be a list of plugin ids to edit it")
    if enable:
        problem = _unknown_ids(ids, _installed())
        if problem:
            raise ReynError(problem)
    changed = [i for i in dict.fromkeys(ids) if (i not in current) == enable]
    unchanged = [i for i in dict.fromkeys(ids) if i not in changed]
    if not enable and unchanged:
        raise ReynError(
            f"{', '.join(map(repr, unchanged))} not enabled in {path} "
            f"(enabled: {', '.join(current) or 'none'})"
        )
    for plugin_id in changed:
        if enable:
            current.append(plugin_id)
        else:
            current.remove(plugin_id)
    if changed:
        _write_checked(path, tomlkit.dumps(doc), is_pyproject)
    verb = "enabled" if enable else "disabled"
    if args.json:
        emit_json({"profile": str(path), verb: changed, "enable": list(current)})
    else:
        for plugin_id in unchanged:
            print(f"{plugin_id}: already enabled in {path}")
        if changed:
            print(f"{'created' if created else 'updated'} {path}: {verb} {', '.join(changed)}")
    return EXIT_OK


def render_init(installed: dict[str, tuple[str, str]]) -> str:
    """The text of a new ``reyn.toml``: commented, every installed plugin listed, none enabled."""
    lines = [
        "# reyn.toml: which Reyn plugins this project may use, and how (docs/profiles.md).",
        "# Installing a plugin enables nothing: list its id in `enable` (or run",
        "# `reyn plugins enable ID`), then `reyn tools render --surface router` shows what a model sees.",
        "#",
    ]
    if installed:
        width = max(len(i) for i in installed)
        lines.append("# Installed plugins:")
        lines += [f"#   {pid.ljust(width)}  {dist} {version}" for pid, (dist, version) in installed.items()]
    else:
        lines.append("# No Reyn plugin is installed yet (entry-point group 'reyn.plugins').")
    lines += [
        "",
        "[plugins]",
        "enable = []",
        "",
        "# Settings of a plugin go in its own table, e.g.",
        "# [plugins.file.settings]",
        '# write_roots = ["out"]',
        "",
        "# [lock]",
        (
            "# enforce = true   # refuse plugins whose files or tools drifted from reyn.lock "
            "(`reyn plugins lock`)"
        ),
        "",
    ]
    return "\n".join(lines)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """``reyn init``."""
    help = "write a commented reyn.toml listing the installed plugins (none enabled)"
    add_command(sub, common, "init", run_init, help)


def run_init(args: argparse.Namespace) -> int:
    """``reyn init``: write a commented ``reyn.toml`` (never over an existing file)."""
    from reyn_core.loading.step1_profile.profile import PROFILE_FILE_NAME

    path = Path(args.profile_file) if getattr(args, "profile_file", None) else Path.cwd() / PROFILE_FILE_NAME
    if path.exists():
        raise ReynError(f"{path} already exists; edit it, or use `reyn plugins enable ID`")
    installed = _installed()
    _write_checked(path, render_init(installed), is_pyproject=False)
    text = f"created {path} ({len(installed)} installed plugin(s) listed, none enabled)"
    text += "\nnext: reyn plugins enable ID   (then: reyn tools list)"
    return emit(args, {"created": str(path), "installed": list(installed)}, text)
