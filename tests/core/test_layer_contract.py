"""The import contracts (``[tool.importlinter]`` in pyproject.toml, run by ``make test``) cover the
whole tree: every module and package of reyn_core is in a core layer, every distribution's package
is a root package, in the ``distributions`` layers and in the acyclic contract, and no import circle
exists anywhere in the tree — not even through a package's own ``__init__``, which import-linter's
sibling check does not see (issue 24)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]


def _contract(contract_id: str) -> dict[str, Any]:
    (found,) = [c for c in _config()["contracts"] if c["id"] == contract_id]
    return found


def _named(layers: list[str]) -> set[str]:
    return {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}


def distribution_packages() -> dict[str, str]:
    """The top-level package of every distribution in the tree, by the folder of its pyproject.toml."""
    found = {}
    for pyproject in sorted(ROOT.glob("**/pyproject.toml")):
        if any(part.startswith(".") or part in ("build", "node_modules") for part in pyproject.parts):
            continue
        setuptools = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
        packages = setuptools["packages"]  # a list, or {"find": {"include": ["pkg*"]}}
        if not isinstance(packages, list):
            packages = [pattern.rstrip("*") for pattern in packages["find"]["include"]]
        found[pyproject.parent.relative_to(ROOT).as_posix()] = packages[0]
    return found


def test_every_reyn_core_module_is_in_a_layer():
    named = _named(_contract("layers")["layers"])
    package = ROOT / "reyn_core"
    present = {
        f"reyn_core.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p / "__init__.py").is_file()
    }
    assert sorted(present - named) == [], "add these modules to a layer in pyproject.toml"
    assert sorted(named - present) == [], "these layer entries name no module"


def test_every_distribution_is_in_the_contracts():
    packages = set(distribution_packages().values())
    assert "reyn_core" in packages and "reyn_sandbox" in packages and len(packages) >= 11
    assert set(_config()["root_packages"]) == packages
    assert _named(_contract("distributions")["layers"]) == packages
    assert set(_contract("acyclic")["ancestors"]) == packages


def _circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_a_circle_finder_finds_a_circle():
    # positive control for the check below: a circle through a package's __init__ is found
    graph = {"p": {"p.a"}, "p.a": {"p"}, "q": {"p"}}
    assert _circles(graph) == [["p", "p.a"]] and _circles({"p": {"p.a"}, "p.a": set()}) == []


def test_no_import_circle_anywhere_in_the_tree():
    import grimp  # import-linter's graph builder (dev dependency): every import, lazy and TYPE_CHECKING

    graph = grimp.build_graph(*sorted(set(distribution_packages().values())), cache_dir=None)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _circles(imports) == []
