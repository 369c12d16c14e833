"""The import contracts (``[tool.importlinter]`` in pyproject.toml, run by ``make test``) cover the
whole tree: every module and package of reyn_core is in a core layer, every distribution's package
is a root package, in the ``distributions`` layers and in the acyclic contract, and no import circle
exists anywhere in the tree — not even through a package's own ``__init__``, which import-linter's
sibling check does not see. The type check (``files`` in ``[tool.mypy]``, run by ``make typecheck``
and ``make test``) covers every distribution's package the same way, each file under its import name
(issue 24)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tree_distributions import tree_distributions

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
    return {folder: package for folder, (package, _) in tree_distributions(ROOT).items()}


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


def _misnamed(root: Path, files: list[str], packages: dict[str, str]) -> list[str]:
    """What mypy's own source discovery (no type checking), over ``files`` from ``root`` with the
    options of ``root``'s pyproject.toml if it has them, gets wrong about the packages (import name ->
    folder relative to ``root``): a .py file it skips, sees twice, or names otherwise than Python
    imports it (a stray ``__init__.py`` above a package folder renames every module of it)."""
    from mypy.config_parser import parse_config_file
    from mypy.find_sources import create_source_list
    from mypy.options import Options

    options = Options()
    if (root / "pyproject.toml").is_file():  # namespace_packages, explicit_package_bases, mypy_path
        parse_config_file(options, lambda: None, str(root / "pyproject.toml"))
    checked: dict[Path, list[str]] = {}
    for source in create_source_list([str(root / f) for f in files], options):
        assert source.path is not None
        checked.setdefault(Path(source.path).resolve(), []).append(source.module)
    wrong = []
    for package, folder in sorted(packages.items()):
        for path in sorted((root / folder).rglob("*.py")):
            parts = path.relative_to(root / folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1], *([] if parts[-1] == "__init__" else parts[-1:])))
            seen = checked.get(path.resolve(), [])
            if seen != [name]:
                wrong.append(f"{path.relative_to(root)}: checked as {seen}, imported as {name}")
    return wrong


def test_mypy_checks_every_distribution():
    # the one list `make typecheck` and `make test` check; a new distribution's package goes in it
    files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    folders = {package: folder for package, folder in tree_distributions(ROOT).values()}
    assert len(folders) == len(distribution_packages()) >= 11
    assert sorted(set(folders.values()) - set(files)) == [], "add these packages to [tool.mypy] files"
    assert sorted(set(files) - set(folders.values())) == [], "these [tool.mypy] files name no package"
    assert _misnamed(ROOT, files, folders) == []


def test_a_misnamed_module_is_found(tmp_path):
    # control for the check above: a pack laid out as the tree's are is checked under its import
    # names; an __init__.py above its package folder makes mypy name it `pack.reyn_tools_x...`
    package = tmp_path / "tools" / "pack" / "reyn_tools_x"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "a.py", "sub/__init__.py", "sub/b.py"):
        (package / name).write_text("")
    (package.parent / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["reyn_tools_x*"]\n'
    )
    folders = {package: folder for package, folder in tree_distributions(tmp_path).values()}
    assert folders == {"reyn_tools_x": "tools/pack/reyn_tools_x"}
    assert _misnamed(tmp_path, ["tools/pack/reyn_tools_x"], folders) == []
    assert len(_misnamed(tmp_path, ["tools/pack/reyn_tools_x/sub"], folders)) == 2  # not all checked
    assert len(_misnamed(tmp_path, ["tools/pack/reyn_tools_x", "tools/pack/reyn_tools_x/sub"], folders)) == 2
    (package.parent / "__init__.py").write_text("")
    assert len(_misnamed(tmp_path, ["tools/pack/reyn_tools_x"], folders)) == 4
