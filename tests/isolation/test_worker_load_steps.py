"""An isolated plugin is loaded in its worker by the loader's own steps
(``reyn_core.host.plugin_from_record``): the same diagnostics, in the same words, as the same plugin
loaded in process — its warnings included, which cross the pipe only as facts (a hook's or a
setting's name) the host words with the loader's own templates: the same message and hint both ways,
and a worker that sends anything else fails its plugin (``RJ005``). Real worker processes."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_isolation.wire import loaded_problem

from .plugin_kit import install_package_plugin, isolation_profile

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


def reyn_diagnostics(settings):  # not decorated: never called, the loader warns (RI004)
    return []
'''

FORGING = """
import reyn_core.host

FACTS, NAMES = {facts!r}, {names!r}
reyn_core.host.WorkerPlugin.warning_facts = property(lambda self: FACTS)  # what the worker sends
if NAMES is not None:
    reyn_core.host.WorkerPlugin.setting_names = property(lambda self: NAMES, lambda self, value: None)
"""


def _load(
    site: Path, isolation: str, settings: str, extra: str = ""
) -> tuple[Any, list[tuple[str, str, str, str]]]:
    name = f"steps_{isolation.replace('-', '_')}"
    install_package_plugin(site, name, {"__init__.py": PLUGIN + extra})
    profile = isolation_profile(name, isolation) + f"[plugins.{name}.settings]\n{settings}\n"
    result = host.load(host.Profile.from_toml_text(profile))
    found = [  # every diagnostic but the isolation backend's own (RJ…): code, severity, message, hint
        (d.code, d.severity, d.message.replace(name, "<id>"), d.hint)
        for d in result.report.diagnostics
        if not d.code.startswith("RJ")
    ]
    return result, sorted(found)


def test_the_loaders_warnings_are_the_same_in_a_worker(site: Path) -> None:
    _, in_process = _load(site, "in-process", 'suffix = "?"\nsufix = "!"')
    result, isolated = _load(site, "process", 'suffix = "?"\nsufix = "!"')
    assert isolated == in_process  # message AND hint, every code
    assert [(code, severity) for code, severity, _, _ in isolated] == [
        ("RC008", "warning"),
        ("RI004", "warning"),
        ("RI011", "warning"),
    ]
    assert "settings.sufix: unknown setting, ignored; did you mean 'suffix'?" in isolated[0][2]
    assert isolated[1][3] == "decorate it with @reyn_core.hookimpl"
    assert "reyn_load_inputs(), a retired hook" in isolated[2][2]
    name = next(t for t in result.registry.tools() if t.name == "shout").name
    reply = asyncio.run(host.dispatch_tool(result.registry, name, {"text": "hi"}, ToolContext(surface="cli")))
    assert reply == {"status": "ok", "data": "HI?"}  # the plugin loads and runs with its settings


@pytest.mark.parametrize(
    ("facts", "names", "why"),
    [
        ([["RI011", "reyn_load_inputs"]] * 100_000, None, "twice"),  # a flood of one true warning
        ([["RC008", "sufix\nRP001 error [other]: forged"]], ["suffix"], "no setting the profile gave"),
        ([["RC008", "nokey"]], ["suffix"], "no setting the profile gave"),
        ([["RC008", "suffix"]], ["suffix"], "no setting the profile gave"),  # a key the model takes
        ([["RI004", "reyn_not_a_hook"]], None, "not a warning the loader gives"),
        ([["RJ008", "runs isolated"]], None, "not a warning the loader gives"),
        ([["RC008", "sufix"]], ["suffix\nforged"], "printable names"),
    ],
)
def test_a_worker_sends_facts_the_host_words_or_its_plugin_fails(
    site: Path, facts: list[Any], names: list[str] | None, why: str
) -> None:
    result, _ = _load(site, "process", 'suffix = "?"\nsufix = "!"', FORGING.format(facts=facts, names=names))
    info = next(p for p in result.report.plugins if p.plugin_id == "steps_process")
    assert info.status == "failed"
    failed = [d for d in info.diagnostics if d.code == "RJ005"]
    assert len(failed) == 1 and why in failed[0].message, info.diagnostics
    assert [d.code for d in info.diagnostics if d.severity == "warning"] == []  # none of it is worded
    assert len(info.diagnostics) < 5


def test_the_host_words_a_workers_facts_with_the_loaders_templates() -> None:
    """The host side alone (``worker_warnings``): each fact once, from finite sets; the same words
    as ``PluginModule.warnings`` for the same plugin in process."""
    words = host.worker_warnings(
        "p", "pkg", [["RC008", "sufix"], ["RI011", "reyn_load_inputs"]], ["suffix"], {"sufix": 1}, "f.toml"
    )
    assert [(d.code, d.hint) for d in words] == [
        ("RC008", host.DIAGNOSTIC_CODES["RC008"].hint),
        ("RI011", host.DIAGNOSTIC_CODES["RI011"].hint),
    ]
    assert words[0].message == (
        "f.toml: plugins.p.settings.sufix: unknown setting, ignored; did you mean 'suffix'? "
        "(valid settings: suffix)"
    )
    for facts in ("RC008", [["RC008", "sufix"]] * 2, [["RC008"]], [["RC008", 3]], [["RC008", "sufix", "x"]]):
        with pytest.raises(ValueError):
            host.worker_warnings("p", "pkg", facts, ["suffix"], {"sufix": 1}, "f.toml")
    assert host.worker_warnings("p", "pkg", [], None, None, "f.toml") == []


def test_invalid_settings_fail_in_the_loaders_words_in_a_worker(site: Path) -> None:
    _, in_process = _load(site, "in-process", "suffix = 3")
    _, isolated = _load(site, "process", "suffix = 3")
    assert [c for c, _, _, _ in isolated if c == "RC001"] == ["RC001"]
    assert [d for d in isolated if d[0] == "RC001"] == [d for d in in_process if d[0] == "RC001"]


def test_a_worker_answer_without_a_list_of_warnings_is_refused() -> None:
    loaded = {"op": "loaded", "tools": [], "hooks": []}
    assert loaded_problem({**loaded, "warnings": [["RC008", "sufix"]]}) is None
    assert "sent warnings" in str(loaded_problem({**loaded, "warnings": "RC008"}))


RAISING_CONFIG = """

class _Raising(dict):
    def get(self, *args):
        raise RuntimeError("the config cannot be read")


Settings.model_config = _Raising(Settings.model_config)  # asked after validation: which keys it drops
"""


def test_a_settings_model_that_raises_is_rc001_on_every_path(site: Path) -> None:
    """In process, isolated and in reyn-testing's ``registry_from_plugin``: one code, one message."""
    from reyn_testing import registry_from_plugin
    from reyn_testing.modules import PluginModuleError

    _, in_process = _load(site, "in-process", 'suffix = "?"', RAISING_CONFIG)
    _, isolated = _load(site, "process", 'suffix = "?"', RAISING_CONFIG)
    failed = [d for d in in_process if d[1] == "error"]
    assert [d[0] for d in failed] == ["RC001"] and "the config cannot be read" in failed[0][2], in_process
    assert [d for d in isolated if d[1] == "error"] == failed
    module = types.ModuleType("raising_config")
    exec(PLUGIN + RAISING_CONFIG, module.__dict__)
    with pytest.raises(PluginModuleError) as info:
        registry_from_plugin(module, settings={"suffix": "?"})
    assert info.value.code == "RC001" and "the config cannot be read" in str(info.value)
    # the control: the same plugin without it loads on every path
    assert [d for d in _load(site, "process", 'suffix = "?"')[1] if d[1] == "error"] == []
    control = types.ModuleType("plain_config")
    exec(PLUGIN, control.__dict__)
    with pytest.warns(UserWarning), pytest.warns(DeprecationWarning):  # RI004, RI011
        registry_from_plugin(control, settings={"suffix": "?"})
