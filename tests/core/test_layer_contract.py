"""The import-layer contract (``[tool.importlinter]`` in pyproject.toml, run by ``make test``) names
every module and package of reyn_core, so a new module cannot slip in outside the layers."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_every_reyn_core_module_is_in_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    package = ROOT / "reyn_core"
    present = {
        f"reyn_core.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p / "__init__.py").is_file()
    }
    assert sorted(present - named) == [], "add these modules to a layer in pyproject.toml"
    assert sorted(named - present) == [], "these layer entries name no module"


def test_the_runtime_sits_above_the_core_and_every_distribution_is_a_root_package():
    """reyn_loops (its own distribution) is a root package of the graph, with a layers contract
    putting it above reyn_core, and a wildcard keeping it on the public API."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert {"reyn_core", "reyn_sandbox", "reyn_loops"} <= set(config["root_packages"])
    contracts = {c["id"]: c for c in config["contracts"]}
    assert contracts["loops-above-core"]["layers"] == ["reyn_loops", "reyn_core"]
    public = contracts["loops-public-api"]
    assert public["forbidden_modules"] == ["reyn_core.**"]
    assert public["ignore_imports"] == ["reyn_loops.** -> reyn_core.host"]
