"""reyn_sandbox is a leaf: every module imports only the standard library and reyn_sandbox itself."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import reyn_sandbox

PACKAGE = Path(reyn_sandbox.__file__).resolve().parent


def _imported_top_levels(source: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_sandbox_imports_only_the_standard_library() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    outside = {
        module.name: sorted(
            name for name in _imported_top_levels(module) if name not in sys.stdlib_module_names
        )
        for module in modules
    }

    assert len(modules) >= 10  # positive control: the package's modules were found
    assert {name: found for name, found in outside.items() if found} == {}
