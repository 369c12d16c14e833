"""A plugin written for an earlier minor version that still implements a retired hook
(``reyn_load_inputs``) loads, with one ``RI011`` warning, and the hook is never called; a hook name
that never existed is still refused (``RI004``)."""

from __future__ import annotations

import sys

import pytest
from plugin_distkit import tool_plugin
from site_plugin import install_site_plugin

from reyn_core.host import Profile, load
from reyn_testing import registry_from_plugin


def _source(pid: str, hook: str) -> str:
    """A plugin registering ``<pid>_echo``, with a ``CALLED`` list and ``hook``'s code."""
    return tool_plugin([f"{pid}_echo"], cluster="probe", extra="CALLED = []\n" + hook)


RETIRED = (
    "\n\n@hookimpl\ndef reyn_load_inputs(settings):\n"
    "    CALLED.append(settings)\n    raise RuntimeError('a retired hook must never be called')\n"
)

pytestmark = pytest.mark.usefixtures("isolated_profile_env")


def _load(tmp_path, monkeypatch, pid: str, hook: str):
    site = tmp_path / "site"
    install_site_plugin(site, pid, _source(pid, hook))
    monkeypatch.syspath_prepend(str(site))
    return load(Profile.from_toml_text(f'[plugins]\nenable = ["{pid}"]\n'))


def test_a_plugin_without_retired_hooks_loads_without_diagnostics(tmp_path, monkeypatch):
    # Positive control: the same plugin, minus the retired hook.
    result = _load(tmp_path, monkeypatch, "rh_plain", "")
    assert result.report.plugin("rh_plain").status == "loaded"
    assert "rh_plain_echo" in result.registry
    assert not result.report.diagnostics


def test_a_plugin_implementing_reyn_load_inputs_loads_with_one_deprecation_warning(tmp_path, monkeypatch):
    result = _load(tmp_path, monkeypatch, "rh_retired", RETIRED)
    info = result.report.plugin("rh_retired")
    assert info.status == "loaded"
    assert "rh_retired_echo" in result.registry
    (diag,) = result.report.diagnostics
    assert (diag.code, diag.severity, diag.plugin) == ("RI011", "warning", "rh_retired")
    assert "reyn_load_inputs()" in diag.message and "retired" in diag.message
    assert sys.modules["reyn_site_rh_retired"].CALLED == []  # registered, never called


def test_an_undecorated_reyn_load_inputs_gets_the_same_warning(tmp_path, monkeypatch):
    hook = "\n\ndef reyn_load_inputs(settings):\n    return {}\n"
    result = _load(tmp_path, monkeypatch, "rh_bare", hook)
    assert result.report.plugin("rh_bare").status == "loaded"
    assert [d.code for d in result.report.diagnostics] == ["RI011"]


def test_a_hook_name_that_never_existed_is_still_refused(tmp_path, monkeypatch):
    hook = "\n\n@hookimpl\ndef reyn_load_input(settings):\n    return {}\n"
    result = _load(tmp_path, monkeypatch, "rh_typo", hook)
    assert result.report.plugin("rh_typo").status == "failed"
    assert [d.code for d in result.report.diagnostics] == ["RI004"]


def test_the_testing_kit_accepts_the_retired_hook_with_a_deprecation_warning(tmp_path, monkeypatch):
    site = tmp_path / "site"
    install_site_plugin(site, "rh_kit", _source("rh_kit", RETIRED))
    monkeypatch.syspath_prepend(str(site))
    with pytest.warns(DeprecationWarning, match="reyn_load_inputs"):
        registry = registry_from_plugin("reyn_site_rh_kit", plugin_id="rh_kit")
    assert "rh_kit_echo" in registry
