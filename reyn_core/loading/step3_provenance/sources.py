"""Where an import package's source lives: top-level names, setuptools' editable finders, ``.pth`` folders."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from importlib.metadata import Distribution
from typing import Any

from reyn_core.loading.step2_discovery.discovery import GROUP, parse_entry_points
from reyn_core.loading.step3_provenance.direct_url import SourceInfo, file_url_path
from reyn_core.loading.step3_provenance.installed_files import RecordEntry


def top_level_names(dist: Distribution, entry_point: str) -> tuple[str, list[str]]:
    """The entry point's top-level module name, and every top-level name the distribution declares
    (its ``reyn.plugins`` entry points, read as discovery reads them, and ``top_level.txt``): the
    names whose source trees a ``source-tree`` digest looks for, since RECORD lists none of their
    files. An installed digest's names come from its files instead (``import_locations``)."""
    ep_top = module_top(entry_point)
    names: list[str] = [ep_top] if ep_top else []
    parser = parse_entry_points(dist.read_text("entry_points.txt") or "")
    values = [value for _, value in parser.items(GROUP)] if parser and parser.has_section(GROUP) else []
    for value in values:
        top = module_top(value)
        if top and top not in names:
            names.append(top)
    for line in (dist.read_text("top_level.txt") or "").splitlines():
        name = line.strip().replace("/", ".").split(".")[0]
        if name.isidentifier() and name not in names:
            names.append(name)
    return ep_top, names


def module_top(value: str) -> str:
    """The top-level module an entry point value (``pkg.mod:attr``) names, or ``""`` when none."""
    module = value.split(":", 1)[0].strip()
    top = module.split(".", 1)[0].strip()
    return top if top.isidentifier() else ""


_MAPPING_LINE = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.M)


def editable_mapping(entries: Iterable[RecordEntry]) -> dict[str, str]:
    """``MAPPING`` of setuptools' editable finder modules listed in RECORD, read without running them."""
    mapping: dict[str, str] = {}
    for e in entries:
        if "/" in e.rel or not (e.rel.startswith("__editable__") and e.rel.endswith("_finder.py")):
            continue
        try:
            with open(e.abspath, encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError):
            continue
        found = literal_mapping(text)
        if found is not None:
            mapping.update({str(k): str(v) for k, v in found.items()})
    return mapping


def literal_mapping(text: str) -> dict[Any, Any] | None:
    """The last top-level ``MAPPING = {...}`` literal of a module's text (one line: fast; else parsed)."""
    for match in reversed(list(_MAPPING_LINE.finditer(text))):
        try:
            value = ast.literal_eval(match.group(1))
        except (ValueError, SyntaxError):
            break  # a multi-line literal: parse the module properly
        return value if isinstance(value, dict) else None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    result = None
    for node in tree.body:
        target = value_node = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value_node = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value_node = node.target, node.value
        if isinstance(target, ast.Name) and target.id == "MAPPING" and value_node is not None:
            try:
                literal = ast.literal_eval(value_node)
            except ValueError:
                continue
            result = literal if isinstance(literal, dict) else result
    return result


def pth_dirs(entries: Iterable[RecordEntry], site: str) -> list[str]:
    """Directories named by path lines of ``.pth`` files listed in RECORD (``import`` lines are skipped)."""
    dirs: list[str] = []
    for e in entries:
        if "/" in e.rel or not e.rel.endswith(".pth"):
            continue
        try:
            with open(e.abspath, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            dirs.append(os.path.join(site, line))
    return dirs


def find_sources(
    names: Iterable[str], entries: list[RecordEntry], site: str, source: SourceInfo
) -> tuple[dict[str, str], list[str]]:
    """Where each top-level import name's source lives, in the order Python's import would look.

    site-packages (the folder holding the metadata) comes first: the path finder runs before the
    editable finder on ``sys.meta_path``. Then setuptools' editable ``MAPPING``, then folders named
    by ``.pth`` files, then the ``dir_info`` project folder and its ``src/``.
    """
    mapping = editable_mapping(entries)
    folders = pth_dirs(entries, site)
    project = file_url_path(source.url) if source.kind in ("editable", "directory") else None
    if project is not None:
        folders += [str(project), os.path.join(project, "src")]
    found: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        location = module_in(site, name, regular_only=True)
        if location is None and name in mapping and os.path.exists(mapping[name]):
            location = mapping[name]
        for base in folders:
            if location is not None:
                break
            location = module_in(base, name)
        if location is not None:
            found[name] = location
        else:
            missing.append(name)
    return found, missing


def module_in(base: str, name: str, *, regular_only: bool = False) -> str | None:
    package = os.path.join(base, name)
    if os.path.isdir(package) and (not regular_only or os.path.isfile(os.path.join(package, "__init__.py"))):
        return package
    module = package + ".py"
    return module if os.path.isfile(module) else None


__all__ = ["find_sources", "module_top", "top_level_names"]
