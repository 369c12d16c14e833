"""The loader's Python API in-process, against the example plugin installed in the dev venv."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import reyn_core
import reyn_core.host
from reyn_core import ToolContext, tool
from reyn_core.host import Profile, dispatch_tool, load, render_router

pytestmark = pytest.mark.usefixtures("isolated_profile_env")


@tool(cluster="host", purity="read_only")
def host_ping(text: str) -> str:
    """Answer with the text."""
    return text


def test_importing_reyn_core_and_the_host_api_does_not_import_the_loader_or_profile():
    code = (
        "import sys, reyn_core, reyn_core.host\n"
        "print('reyn_core.loading.loader' in sys.modules,"
        " 'reyn_core.loading.step1_profile.profile' in sys.modules)\n"
        "reyn_core.host.load\n"
        "print('reyn_core.loading.loader' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]


def test_lazy_exports_are_the_real_objects():
    from reyn_core.loading.loader import LoadResult
    from reyn_core.loading.loader import load as real_load
    from reyn_core.loading.step1_profile.profile import load_profile

    assert reyn_core.host.load is real_load and reyn_core.host.LoadResult is LoadResult
    assert reyn_core.host.load_profile is load_profile
    with pytest.raises(AttributeError):
        reyn_core.no_such_name  # noqa: B018


def test_load_without_a_profile_argument_uses_the_local_reyn_toml(tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    result = load()
    assert result.report.plugin("example").status == "loaded"
    assert result.profile.source == str(tmp_path / "reyn.toml")
    assert result.registry.frozen


def test_empty_profile_loads_nothing_but_host_tools():
    result = load(Profile(), host_tools=[host_ping])
    assert [t.name for t in result.registry.tools()] == ["host_ping"]
    assert result.report.plugin("example").status == "discovered"
    assert result.report.diagnostics == ()


def test_a_bad_host_tool_is_diagnosed_and_the_rest_registers():
    result = load(Profile(), host_tools=[42, host_ping])
    assert [(d.code, d.plugin) for d in result.report.diagnostics] == [("RT001", None)]
    assert "host_ping" in result.registry


def test_two_host_tools_with_one_name_register_neither():
    @tool(name="host_ping", cluster="host", purity="read_only")
    def other_ping(text: str) -> str:
        """Another tool called host_ping."""
        return text

    result = load(Profile(), host_tools=[host_ping, other_ping])
    assert [d.code for d in result.report.diagnostics] == ["RT004"]
    assert "host_ping" not in result.registry


def test_audit_log_records_every_plugin_call(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "reyn.toml").write_text(
        textwrap.dedent("""
        [plugins]
        enable = ["example"]
        [audit]
        log = "logs/audit.jsonl"
        """)
    )
    result = load(reyn_core.host.load_profile(profile_file=tmp_path / "conf" / "reyn.toml"))
    ctx = ToolContext(surface="router", agent="tester")
    envelope = __import__("asyncio").run(dispatch_tool(result.registry, "text_stats", {"text": "a b a"}, ctx))
    assert envelope["status"] == "ok"
    lines = (tmp_path / "conf" / "logs" / "audit.jsonl").read_text().splitlines()
    record = json.loads(lines[-1])
    assert record["tool"] == "text_stats" and record["plugin"] == "example" and record["agent"] == "tester"
    assert record["digest"] == result.report.plugin("example").provenance.tree_digest
    assert record["status"] == "ok" and record["args_sha256"].startswith("hmac-sha256:")


def test_render_is_identical_across_loads():
    profile = Profile.from_toml_text('[plugins]\nenable = ["example"]\n')
    first = render_router(load(profile).registry, ToolContext(surface="router"))
    second = render_router(load(profile).registry, ToolContext(surface="router"))
    assert json.dumps(first) == json.dumps(second) and first


@pytest.mark.parametrize("verify", ["cache", "full"])
def test_the_retired_lock_verify_key_is_one_warning_and_changes_nothing(verify):
    text = '[plugins]\nenable = ["example"]\n'
    plain = load(Profile.from_toml_text(text))
    result = load(Profile.from_toml_text(text + f'\n[lock]\nverify = "{verify}"\n'))
    retired = [d for d in result.report.diagnostics if d.code == "RL005"]
    assert len(retired) == 1 and retired[0].severity == "warning", retired
    assert f"verify = {verify!r}" in retired[0].message and "is ignored" in retired[0].message
    assert not [d for d in plain.report.diagnostics if d.code == "RL005"]
    assert result.report.plugin("example").status == "loaded"
    assert [t.name for t in result.registry.tools()] == [t.name for t in plain.registry.tools()]


def test_an_unwritable_audit_log_is_RC006_and_calls_are_refused(tmp_path):
    (tmp_path / "blocker").write_text("a file where the log folder should be")
    profile = Profile.from_toml_text(
        f'[plugins]\nenable = ["example"]\n[audit]\nlog = "{tmp_path}/blocker/a.jsonl"\n'
    )
    result = load(profile)
    [diag] = [d for d in result.report.diagnostics if d.code == "RC006"]
    assert diag.severity == "error" and "not a directory" in diag.message
    envelope = __import__("asyncio").run(
        dispatch_tool(result.registry, "text_stats", {"text": "a"}, ToolContext(surface="router"))
    )
    assert envelope["error"]["kind"] == "denied" and "audit log" in envelope["error"]["message"]


def _load_with_surface_lists(exclude: str, ops: str) -> Any:
    """Load the example plugin with ``[surfaces.router] exclude`` and ``[surfaces.phase]
    default_allowed_ops`` set to the given TOML lists."""
    toml = f'[plugins]\nenable = ["example"]\n[surfaces.router]\nexclude = {exclude}\n'
    return load(Profile.from_toml_text(toml + f"[surfaces.phase]\ndefault_allowed_ops = {ops}\n"))


def test_a_router_exclude_typo_is_an_RC007_error_and_an_ops_typo_a_warning():
    result = _load_with_surface_lists('["text_stat"]', '["exampel", "text_stats"]')
    found = {(d.severity, d.tool) for d in result.report.diagnostics if d.code == "RC007"}
    assert found == {("error", "text_stat"), ("warning", "exampel")}
    names = [t["function"]["name"] for t in render_router(result.registry, ToolContext(surface="router"))]
    assert "text_stats" in names  # the typo excluded nothing, which is exactly why it is an error


def test_correct_surface_lists_raise_no_RC007():
    result = _load_with_surface_lists('["text_stats"]', '["example", "convert_*"]')
    assert [d for d in result.report.diagnostics if d.code == "RC007"] == []


@pytest.mark.parametrize(
    ("narrowing", "kept"),
    [
        ('tools.exclude = ["text_stats"]', ["ex_convert_units", "ex_markdown_outline"]),
        ('tools.include = ["markdown_outline"]', ["ex_markdown_outline"]),
    ],
)
def test_tools_include_exclude_are_applied_once_by_the_loader_not_again_by_the_gates(narrowing, kept):
    # issue 12: the profile's tools.include / tools.exclude narrow what is registered; the loaded
    # registry's operator policy carries only the surfaces, so the gates have nothing to re-apply.
    result = load(
        Profile.from_toml_text(
            f'[plugins]\nenable = ["example"]\n[plugins.example]\nprefix = "ex_"\n{narrowing}\n'
        )
    )
    assert sorted(t.name for t in result.registry) == kept
    policy = result.registry.operator.plugins["example"]
    assert policy.include is None and policy.exclude == frozenset()
    phase = reyn_core.host.render_phase(result.registry, ToolContext(), allowed_ops=["example"])
    assert sorted(op.kind for op in phase.ops) == kept


@pytest.mark.parametrize("review", ["Audit", "audit ", "check"])
def test_an_unknown_review_mode_is_refused_before_anything_loads(review):
    # a review load turns off the lock's enforcement for plugins and gates them itself (audit); a
    # misspelt mode must not become a review without the gate
    with pytest.raises(ValueError, match=r"review is 'lock', 'audit' or None"):
        load(Profile(), review=review)


@pytest.mark.parametrize("review", [None, "lock", "audit"])
def test_the_known_review_modes_load(review):
    registry = load(Profile(), host_tools=[host_ping], review=review).registry
    assert [t.name for t in registry.tools()] == ["host_ping"]
