"""Every distribution on top of the core — the packs, the example plugin, the demo (and any new one:
they are found from the tree's pyproject.toml files) — imports only reyn_core's public API: its
public modules (``PUBLIC_MODULES``, pinned in test_exported_members.py) and, from them, only names
in their ``__all__`` (issue 24).

Checked on the import statements themselves (module level, in functions and under TYPE_CHECKING)
and on ``"reyn_core…"`` strings (a lazy handler or ``importlib.import_module`` target), not on
import-linter's graph: to the graph, ``from reyn_core import tool`` (the public decorator) and an
import of the private module ``reyn_core.tool`` are the same edge."""

from __future__ import annotations

import ast
import importlib
import re

from .test_exported_members import PUBLIC_MODULES, ROOT
from .test_layer_contract import distribution_packages

REFERENCE = re.compile(r"reyn_core(?:\.\w+)+(?::\w+)?")


def _public_names(module: str) -> set[str]:
    return set(importlib.import_module(module).__all__)


def problems_in(source: str, where: str) -> list[str]:
    """Each use of reyn_core in ``source`` that is not its public API, as ``where:line: what``."""
    public = set(PUBLIC_MODULES)
    found = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found += [
                f"{where}:{line}: import {a.name}"
                for a in node.names
                if a.name.startswith("reyn_core.") and a.name not in public
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module = node.module
            if module != "reyn_core" and not module.startswith("reyn_core."):
                continue
            if module not in public:
                found.append(f"{where}:{line}: from {module} import …")
                continue
            names = _public_names(module)
            found += [
                f"{where}:{line}: from {module} import {a.name}"
                for a in node.names
                if a.name not in names and f"{module}.{a.name}" not in public
            ]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if REFERENCE.fullmatch(node.value) and node.value.partition(":")[0] not in public:
                found.append(f"{where}:{line}: {node.value!r}")
    return found


def test_the_check_refuses_private_modules_and_names():
    # positive and negative controls for the walk below
    assert problems_in("from reyn_core import tool, ToolContext\nimport reyn_core.host\n", "ok") == []
    bad = (
        "from reyn_core.tool import ToolDefinition\n"
        "import reyn_core.loading.loader\n"
        "from reyn_core import _lazy_exports\n"
        "def f():\n    from reyn_core.registry import RegistryBuilder\n"
        "H = 'reyn_core.dispatch:invoke_tool'\n"
    )
    assert len(problems_in(bad, "bad")) == 5


def test_distributions_on_the_core_use_only_its_public_api():
    found = []
    for folder, package in distribution_packages().items():
        if package == "reyn_core":
            continue
        for path in sorted((ROOT / folder).rglob("*.py")):
            if any(part.startswith(".") or part == "build" for part in path.relative_to(ROOT).parts):
                continue
            found += problems_in(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert found == []
