"""Issue 14 in-process, on the packs installed in the dev venv: typos in settings and plugin tables
get 'did you mean' and the valid names; a not_found name gets a host-side hint a model never sees."""

from __future__ import annotations

import json

import pytest

from reyn_core.host import Profile, explain_unavailable_tool, load
from reyn_loops.router import tool_message

pytestmark = pytest.mark.usefixtures("isolated_profile_env")


def test_an_unknown_file_setting_suggests_the_closest_and_lists_the_valid_ones():
    profile = Profile.from_toml_text(
        '[plugins]\nenable = ["file"]\n[plugins.file.settings]\nwrite_root = "."\n'
    )
    [diag] = [d for d in load(profile).report.diagnostics if d.code == "RC001"]
    assert (
        diag.message.startswith(
            "<string>: plugins.file.settings.write_root: unknown setting; did you mean 'write_roots'? "
            "(valid settings: allow_hardlinked_reads, "
        )
        or "did you mean 'write_roots'? (valid settings: allow_hardlinked_reads, " in diag.message
    )
    assert diag.message.endswith(", workspace, write_roots)")


def test_a_plugin_table_with_a_typo_names_the_closest_installed_plugin():
    profile = Profile.from_toml_text('[plugins]\nenable = ["example"]\n[plugins.fiel]\nprefix = "f_"\n')
    [diag] = [d for d in load(profile).report.diagnostics if d.code == "RC004"]
    assert (
        "is not in plugins.enable, and no installed plugin is called 'fiel'; did you mean [plugins.file]?"
        in (diag.message)
    )
    assert "(installed plugins: " in diag.message and "file" in diag.message.split("installed plugins: ")[1]


def test_a_table_for_an_installed_but_disabled_plugin_keeps_the_plain_rc004():
    profile = Profile.from_toml_text('[plugins]\nenable = ["example"]\n[plugins.file]\nprefix = "f_"\n')
    [diag] = [d for d in load(profile).report.diagnostics if d.code == "RC004"]
    assert diag.message.endswith("but 'file' is not in plugins.enable")


def test_unavailable_tool_lists_the_enabled_plugins_that_did_not_load():
    result = load(Profile.from_toml_text('[plugins]\nenable = ["example", "ghost"]\n'))
    hint = explain_unavailable_tool(result, "ghost_tool")
    assert hint is not None and hint.known is False
    assert [(p.plugin_id, p.status, p.code) for p in hint.plugins] == [("ghost", "missing", "RD001")]
    assert explain_unavailable_tool(result, "convert_units") is None  # loaded: nothing to explain


def test_unavailable_tool_is_none_when_every_enabled_plugin_loaded():
    result = load(Profile.from_toml_text('[plugins]\nenable = ["example"]\n'))
    assert explain_unavailable_tool(result, "no_such_tool") is None


def test_the_model_facing_tool_message_drops_host_hint():
    envelope = {
        "status": "error",
        "error": {"kind": "not_found", "message": "no tool named 'x'"},
        "host_hint": {"plugins": [{"plugin": "secret", "status": "failed", "code": "RI001"}]},
    }
    content = json.loads(tool_message("c1", envelope)["content"])
    assert content == {"status": "error", "error": {"kind": "not_found", "message": "no tool named 'x'"}}
