"""The distributions of the tree, found from it: every folder with a pyproject.toml and the folder
of its top-level package — for the tests that hold every distribution to a rule (the import
contracts, the type check, the module size)."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def tree_distributions(root: Path) -> dict[str, tuple[str, str]]:
    """Every distribution under ``root``, by the folder of its pyproject.toml: its top-level package
    and that package's folder (relative to ``root``, as setuptools' ``package-dir`` maps it)."""
    found = {}
    for pyproject in sorted(root.glob("**/pyproject.toml")):
        inside = pyproject.relative_to(root).parts  # a checkout under a dotted folder is still read
        if any(part.startswith(".") or part in ("build", "node_modules") for part in inside):
            continue
        setuptools = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
        packages = setuptools["packages"]  # a list, or {"find": {"include": ["pkg*"]}}
        if not isinstance(packages, list):
            packages = [pattern.rstrip("*") for pattern in packages["find"]["include"]]
        folder = pyproject.parent / setuptools.get("package-dir", {}).get(packages[0], packages[0])
        found[pyproject.parent.relative_to(root).as_posix()] = (
            packages[0],
            folder.resolve().relative_to(root).as_posix(),
        )
    return found
