"""Tool names that differ only in case or separators collide (hardening issue 11, class 6).

``read_file``, ``Read_File`` and ``read-file`` are one name to a model or provider, so a second
claimant is refused like an identical name: in a hand-built registry, between host tools, between
a host tool and a plugin's, and inside one plugin. The registered name keeps its spelling.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from reyn_core import ToolDefinition, ToolOrigin, ToolRegistrationError, tool
from reyn_core.host import Profile, RegistryBuilder, load
from reyn_core.loading.step1_profile.profile import load_profile
from reyn_core.registry import collision_key

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("REYN_PROFILE", "REYN_PROFILE_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def definition(name: str) -> ToolDefinition:
    return ToolDefinition(name=name, description=f"The {name} tool.", parameters=SCHEMA, handler=lambda: name)


def host_tool(name: str) -> ToolDefinition:
    return ToolDefinition(
        name=name, description=f"Host {name}.", parameters=SCHEMA, handler=lambda: name, cluster="host"
    )


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("read_file", "Read_File"),
        ("read_file", "read-file"),
        ("read_file", "READ-FILE"),
        ("read_file", "read__file"),
        ("read_file", "_read_file"),
        ("read_file", "read_file-"),
        ("ReadFile", "readfile"),
    ],
)
def test_confusable_names_collide_in_a_registry_naming_both(a: str, b: str) -> None:
    builder = RegistryBuilder()
    builder.register(definition(a), origin=ToolOrigin(kind="plugin", plugin_id="one"))
    with pytest.raises(ToolRegistrationError) as info:
        builder.register(definition(b), origin=ToolOrigin(kind="plugin", plugin_id="two"))
    assert info.value.code == "RT004"
    assert repr(a) in info.value.message and repr(b) in info.value.message
    assert "plugin 'one'" in info.value.message and "plugin 'two'" in info.value.message
    snap = builder.freeze()
    assert [t.name for t in snap.tools()] == [a]  # kept as written


def test_distinct_names_do_not_collide_and_keep_their_spelling() -> None:
    builder = RegistryBuilder()
    for name in ("read_file", "read_files", "readfile2", "Write_File"):
        builder.register(definition(name))
    assert [t.name for t in builder.freeze().tools()] == [
        "Write_File",
        "read_file",
        "read_files",
        "readfile2",
    ]


def test_collision_key_folds_case_separators_and_dots() -> None:
    assert (
        collision_key("Read-File") == collision_key("read.file") == collision_key("read_file") == "read_file"
    )
    assert collision_key("a--b__c") == "a_b_c"
    assert collision_key("_") == "_"  # nothing but separators: the name itself
    assert collision_key("x") != collision_key("y")


def test_host_tools_differing_only_in_case_register_neither() -> None:
    result = load(Profile(), host_tools=[host_tool("ping_host"), host_tool("Ping-Host")])
    diags = [d for d in result.report.diagnostics if d.code == "RT004"]
    assert len(diags) == 1
    assert "'ping_host'" in diags[0].message and "'Ping-Host'" in diags[0].message
    assert "ping_host" not in result.registry and "Ping-Host" not in result.registry


def _profile(tmp_path: Path, text: str) -> Profile:
    path = tmp_path / "reyn.toml"
    path.write_text(textwrap.dedent(text))
    return load_profile(profile_file=path)


def test_host_tool_confusable_with_a_plugin_tool_registers_neither(tmp_path: Path) -> None:
    profile = _profile(tmp_path, '[plugins]\nenable = ["file"]\n')
    result = load(profile, host_tools=[host_tool("Read-File")])
    diags = [d for d in result.report.diagnostics if d.code == "RT004"]
    assert [(d.plugin, d.tool) for d in diags] == [("file", "read_file")]
    assert "'Read-File' by the host" in diags[0].message or "'Read-File'" in diags[0].message
    assert "plugin 'file'" in diags[0].message
    assert "read_file" not in result.registry and "Read-File" not in result.registry
    assert "write_file" in result.registry  # the rest of the plugin loads


def test_prefix_that_makes_names_confusable_collides(tmp_path: Path) -> None:
    # The prefix is applied before the check: "FILE-read_file" vs the host's "file_read_file".
    profile = _profile(tmp_path, '[plugins]\nenable = ["file"]\n[plugins.file]\nprefix = "FILE-"\n')
    result = load(profile, host_tools=[host_tool("file_read_file")])
    diags = [d for d in result.report.diagnostics if d.code == "RT004"]
    assert [(d.plugin, d.tool) for d in diags] == [("file", "FILE-read_file")]
    assert "FILE-read_file" not in result.registry and "file_read_file" not in result.registry
    assert "FILE-write_file" in result.registry


def test_exclude_resolves_a_confusable_pair(tmp_path: Path) -> None:
    profile = _profile(
        tmp_path, '[plugins]\nenable = ["file"]\n[plugins.file.tools]\nexclude = ["read_file"]\n'
    )
    result = load(profile, host_tools=[host_tool("Read-File")])
    assert not [d for d in result.report.diagnostics if d.code == "RT004"]
    assert "Read-File" in result.registry


@tool(name="Text-Stats", cluster="host", purity="read_only")
def shouting_stats(text: str) -> str:
    """A host tool whose name differs from the example plugin's only by case and separator."""
    return text


def test_decorated_host_tool_confusable_with_example_plugin(tmp_path: Path) -> None:
    profile = _profile(tmp_path, '[plugins]\nenable = ["example"]\n')
    result = load(profile, host_tools=[shouting_stats])
    diags = [d for d in result.report.diagnostics if d.code == "RT004"]
    assert len(diags) == 1 and "'Text-Stats'" in diags[0].message and "'text_stats'" in diags[0].message
    assert "text_stats" not in result.registry and "Text-Stats" not in result.registry
