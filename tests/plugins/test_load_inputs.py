"""``reyn_load_inputs``: what a plugin declares its load reads, as the loader records it (the render
cache replays only loads whose every plugin declared; tests/cli/test_render_cache.py)."""

from __future__ import annotations

import os

import pytest
from site_plugin import install_site_plugin

from reyn_core.host import Profile, load
from reyn_core.loading.load_inputs import MAX_DECLARED, parse_load_inputs
from reyn_core.loading.report import LoadInputs

PLUGIN = """\
from reyn_core import hookimpl, tool

REYN_API = 1


@tool(cluster="probe", purity="read_only")
def {pid}_echo(text: str) -> str:
    \"\"\"Echo the text.\"\"\"
    return text


@hookimpl
def reyn_register_tools(register, settings):
    register({pid}_echo)
{hook}
"""


pytestmark = pytest.mark.usefixtures("isolated_profile_env")


def _load(tmp_path, monkeypatch, pid: str, hook: str):
    site = tmp_path / "site"
    install_site_plugin(site, pid, PLUGIN.format(pid=pid, hook=hook))
    monkeypatch.syspath_prepend(str(site))
    return load(Profile.from_toml_text(f'[plugins]\nenable = ["{pid}"]\n'))


def test_a_declaration_is_recorded_with_paths_made_absolute_and_sorted(tmp_path, monkeypatch):
    hook = (
        "@hookimpl\ndef reyn_load_inputs(settings):\n"
        "    return {'env': ['PROBE_B', 'PROBE_A'], 'paths': ['data/x.json', '/etc/hosts']}\n"
    )
    result = _load(tmp_path, monkeypatch, "lin_declared", hook)
    assert result.report.plugin("lin_declared").status == "loaded"
    assert result.load_inputs["lin_declared"] == LoadInputs(
        ("PROBE_A", "PROBE_B"), tuple(sorted(("/etc/hosts", str(tmp_path / "data" / "x.json"))))
    )


def test_a_plugin_without_the_hook_declares_nothing(tmp_path, monkeypatch):
    result = _load(tmp_path, monkeypatch, "lin_silent", "")
    assert result.report.plugin("lin_silent").status == "loaded"
    assert result.load_inputs == {"lin_silent": None}
    assert not result.report.diagnostics


def test_returning_none_declares_nothing_without_a_warning(tmp_path, monkeypatch):
    hook = "@hookimpl\ndef reyn_load_inputs(settings):\n    return None\n"
    result = _load(tmp_path, monkeypatch, "lin_none", hook)
    assert result.load_inputs == {"lin_none": None} and not result.report.diagnostics


@pytest.mark.parametrize(
    ("pid", "body", "message"),
    [
        ("lin_raises", "raise RuntimeError('boom')", "reyn_load_inputs raised RuntimeError: boom"),
        ("lin_unknown_key", "return {'files': []}", "unknown key(s) 'files'"),
        ("lin_list", "return ['PATH']", "returned a list, not a mapping or None"),
    ],
)
def test_a_misbehaving_hook_warns_ri010_and_the_plugin_still_loads(tmp_path, monkeypatch, pid, body, message):
    result = _load(tmp_path, monkeypatch, pid, f"@hookimpl\ndef reyn_load_inputs(settings):\n    {body}\n")
    assert result.report.plugin(pid).status == "loaded"
    assert result.load_inputs == {pid: None}
    (diag,) = result.report.diagnostics
    assert (diag.code, diag.severity) == ("RI010", "warning")
    assert message in diag.message and "is cached" in diag.message


def test_a_failed_plugin_records_none_whatever_it_would_declare(tmp_path, monkeypatch):
    hook = "@hookimpl\ndef reyn_load_inputs(settings):\n    return {}\n\nraise ImportError('no')\n"
    result = _load(tmp_path, monkeypatch, "lin_failed", hook)
    assert result.report.plugin("lin_failed").status == "failed"
    assert result.load_inputs == {"lin_failed": None}


def test_parse_accepts_an_empty_declaration_and_path_like_entries(tmp_path):
    assert parse_load_inputs({}) == LoadInputs()
    assert parse_load_inputs({"paths": [tmp_path / "a" / ".." / "b"]}, cwd="/x").paths == (
        str(tmp_path / "b"),
    )
    assert parse_load_inputs({"paths": ["rel"]}, cwd="/base").paths == (os.path.join("/base", "rel"),)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"env": "HOME"}, "env must be a list, got str"),
        ({"paths": "/x"}, "paths must be a list, got str"),
        ({"env": ["1BAD"]}, "'1BAD' is not an environment variable name"),
        ({"env": [None]}, "None is not an environment variable name"),
        ({"paths": [""]}, "is not a path"),
        ({"paths": [3]}, "3 is not a path"),
        ({"env": [f"V{i}" for i in range(MAX_DECLARED + 1)]}, f"at most {MAX_DECLARED}"),
    ],
)
def test_parse_refuses_a_malformed_declaration(value, message):
    with pytest.raises(ValueError, match=message):
        parse_load_inputs(value)
