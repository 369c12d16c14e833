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
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.replace("|", ":").split(":")}
    package = ROOT / "reyn_core"
    present = {
        f"reyn_core.{p.stem if p.is_file() else p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__")) or (p / "__init__.py").is_file()
    }
    assert sorted(present - named) == [], "add these modules to a layer in pyproject.toml"
    assert sorted(named - present) == [], "these layer entries name no module"
