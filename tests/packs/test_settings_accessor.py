"""Every pack (and the example plugin) reads its settings through ``reyn_core.settings_as``: no module
outside a pack's settings model converts settings itself (``Model.model_validate``, ``isinstance(x,
Model)``, ``Model()`` as a fallback), so a mapping, ``None`` and a wrong type behave the same in every
pack — and a new hand-written converter fails here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from pydantic import BaseModel

from reyn_core import ToolContext, ToolRuntimeMissing, settings_as

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(
    [p for p in (ROOT / "reyn_builtin_tools").glob("*/reyn_tools_*") if (p / "__init__.py").is_file()]
    + [ROOT / "reyn_plugin_example" / "reyn_example"]
)
# Packs with a settings model (the search pack has none: its plugin implements no reyn_settings_model).
PACKAGES = [
    p for p in PACKAGES if hasattr(importlib.import_module(f"{p.name}.plugin"), "reyn_settings_model")
]
PLUGINS = [f"{p.name}.plugin" for p in PACKAGES]


def _settings_model(plugin: str) -> type[BaseModel]:
    return importlib.import_module(plugin).reyn_settings_model()


def _conversions(path: Path, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "model_validate"
            and getattr(f.value, "id", "") in names
        ):
            found.append(f"{path.name}:{node.lineno} {f.value.id}.model_validate")  # type: ignore[attr-defined]
        if isinstance(f, ast.Name) and f.id == "isinstance" and len(node.args) == 2:
            cls = node.args[1]
            if isinstance(cls, ast.Name) and cls.id in names:
                found.append(f"{path.name}:{node.lineno} isinstance(..., {cls.id})")
    return found


def test_the_packs_were_found():
    assert {p.name for p in PACKAGES} >= {
        "reyn_tools_file",
        "reyn_tools_shell",
        "reyn_tools_web",
        "reyn_tools_mcp",
        "reyn_tools_memory",
        "reyn_tools_catalog",
        "reyn_example",
    }


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_pack_module_converts_its_settings_by_hand(package: Path):
    model = _settings_model(f"{package.name}.plugin")
    names = {model.__name__}
    found = []
    for path in sorted(package.glob("*.py")):
        if path.name == "settings.py":  # the model itself (and its nested models)
            continue
        found += _conversions(path, names)
    assert not found, f"use reyn_core.settings_as(ctx_or_value, {model.__name__}) instead: {found}"


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_pack_model_works_with_the_one_accessor(plugin: str):
    model = _settings_model(plugin)
    defaults = settings_as(ToolContext(), model)
    assert defaults == model()
    assert settings_as({}, model) == defaults and settings_as(defaults, model) is defaults
    with pytest.raises(ToolRuntimeMissing, match=rf"invalid {model.__name__} settings: no_such_key"):
        settings_as({"no_such_key": 1}, model)
    with pytest.raises(ToolRuntimeMissing, match=rf"settings must be a {model.__name__}, a mapping or None"):
        settings_as(ToolContext(settings=["not", "settings"]), model)
