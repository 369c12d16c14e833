"""An isolated plugin is loaded in its worker by the loader's own steps
(``reyn_core.host.plugin_from_record``): the same diagnostics, in the same words, as the same plugin
loaded in process — its warnings included, which cross the pipe only as the loader's warning codes.
Real worker processes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_isolation.wire import loaded_problem

from .plugin_kit import install_package_plugin

PLUGIN = '''
from pydantic import BaseModel
from reyn_core import ToolContext, hookimpl, tool

REYN_API = 1


class Settings(BaseModel):  # extras ignored: an unknown key is dropped, so the loader warns (RC008)
    suffix: str = "!"


@tool(purity="read_only")
def shout(text: str, ctx: ToolContext) -> str:
    """Upper-case text."""
    return text.upper() + ctx.settings.suffix


@hookimpl
def reyn_register_tools(register, settings):
    register(shout)


@hookimpl
def reyn_load_inputs(settings):  # retired: never called, the loader warns (RI011)
    raise RuntimeError("a retired hook must never be called")


@hookimpl
def reyn_settings_model():
    return Settings
'''


def _load(site: Path, isolation: str, settings: str) -> tuple[Any, list[tuple[str, str, str]]]:
    name = f"steps_{isolation.replace('-', '_')}"
    install_package_plugin(site, name, {"__init__.py": PLUGIN})
    profile = (
        f'[plugins]\nenable = ["{name}"]\n[plugins.{name}]\nisolation = "{isolation}"\n'
        f"[plugins.{name}.settings]\n{settings}\n"
    )
    result = host.load(host.Profile.from_toml_text(profile))
    codes = {"RC001", "RC008", "RI011"}
    found = [
        (d.code, d.severity, d.message.replace(name, "<id>"))
        for d in result.report.diagnostics
        if d.code in codes
    ]
    return result, sorted(found)


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_the_loaders_warnings_are_the_same_in_a_worker(site: Path, isolation: str) -> None:
    result, found = _load(site, isolation, 'suffix = "?"\nsufix = "!"')
    assert [(code, severity) for code, severity, _ in found] == [("RC008", "warning"), ("RI011", "warning")]
    assert "settings.sufix: unknown setting, ignored; did you mean 'suffix'?" in found[0][2]
    assert "reyn_load_inputs(), a retired hook" in found[1][2]
    name = next(t for t in result.registry.tools() if t.name == "shout").name
    reply = asyncio.run(host.dispatch_tool(result.registry, name, {"text": "hi"}, ToolContext(surface="cli")))
    assert reply == {"status": "ok", "data": "HI?"}  # the plugin loads and runs with its settings


def test_invalid_settings_fail_in_the_loaders_words_in_a_worker(site: Path) -> None:
    _, in_process = _load(site, "in-process", "suffix = 3")
    _, isolated = _load(site, "process", "suffix = 3")
    assert [c for c, _, _ in isolated] == ["RC001"]
    assert [m for c, _, m in isolated if c == "RC001"] == [m for c, _, m in in_process if c == "RC001"]


def test_a_worker_can_send_only_the_loaders_warning_codes() -> None:
    loaded = {"op": "loaded", "tools": [], "hooks": []}
    assert loaded_problem({**loaded, "warnings": [["RC008", "an ignored setting"]]}) is None
    for forged in ([["RJ008", "runs isolated"]], [["RC008"]], [["RC008", 3]], "RC008", [("RC008", "x")]):
        assert "sent warnings" in str(loaded_problem({**loaded, "warnings": forged})), forged
