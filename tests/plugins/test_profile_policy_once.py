"""The profile's call policy is applied by ``load()`` once (issue 24): the operator policy and the
audit log go into the registry, deferral into ``LoadResult.deferral``; the audit log is opened once
per load, and a deferral typo stops only the router surface."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import reyn_core.dispatch
from reyn_core import ToolContext
from reyn_core.host import DeferralPolicy, ProfileError, dispatch_tool, load
from reyn_core.loading.step1_profile.profile import load_profile


@pytest.fixture(autouse=True)
def isolated(isolated_profile_env: None) -> None:
    """No profile, user config or cache of the machine's (the tests/conftest.py fixture)."""


def _load(tmp_path: Path, text: str, enable: str = '["example", "search"]'):  # type: ignore[no-untyped-def]
    (tmp_path / "reyn.toml").write_text(f"[plugins]\nenable = {enable}\n" + text)
    return load(load_profile(profile_file=tmp_path / "reyn.toml"))


def test_the_deferral_is_the_profiles_as_load_applied_it(tmp_path: Path) -> None:
    result = _load(tmp_path, '[surfaces.router.defer]\ntools = ["text_stats"]\n')
    assert result.deferral == DeferralPolicy(
        tools=frozenset({"text_stats"}), plugin_order=("example", "search")
    )
    assert not _load(tmp_path, "").deferral.active  # control: no table, nothing deferred


def test_deferring_without_the_search_pack_stops_the_router_surface_only(tmp_path: Path) -> None:
    result = _load(tmp_path, '[surfaces.router.defer]\ntools = ["text_stats"]\n', enable='["example"]')
    for _ in range(2):  # fail closed: every read refuses, naming the key and what to enable
        with pytest.raises(ProfileError) as info:
            result.deferral  # noqa: B018
        assert info.value.key == "surfaces.router.defer.search_tool"
        assert "no tool 'find_tools' is loaded" in str(info.value) and '"search"' in str(info.value)
    # Everything else keeps working; without a defer table no search tool is needed.
    ctx = ToolContext(surface="router", agent="t")
    assert asyncio.run(dispatch_tool(result.registry, "text_stats", {"text": "a b"}, ctx))["status"] == "ok"
    assert not _load(tmp_path, "", enable='["example"]').deferral.active


def test_a_deferral_typo_stops_the_router_surface_only(tmp_path: Path) -> None:
    result = _load(tmp_path, '[surfaces.router.defer]\ntools = ["text_stat"]\n')
    assert "text_stats" in result.registry and result.report.plugin("example").status == "loaded"
    for _ in range(2):  # every read says the same, with the entry and the near name
        with pytest.raises(ProfileError) as info:
            result.deferral  # noqa: B018
        assert info.value.key == "surfaces.router.defer.tools[0]" and "text_stats" in str(info.value)


def test_the_audit_log_is_opened_once_per_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Path] = []
    real_init = reyn_core.dispatch.JsonlAuditLog.__init__

    def counting_init(self, path, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(Path(path))
        real_init(self, path, **kwargs)

    monkeypatch.setattr(reyn_core.dispatch.JsonlAuditLog, "__init__", counting_init)
    result = _load(tmp_path, '[audit]\nlog = "audit.jsonl"\n')
    assert opened == [tmp_path / "audit.jsonl"]
    # the one log is the one the registry's hooks write to
    ctx = ToolContext(surface="router", agent="t")
    envelope = asyncio.run(dispatch_tool(result.registry, "text_stats", {"text": "a b"}, ctx))
    assert envelope["status"] == "ok"
    (line,) = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert json.loads(line)["tool"] == "text_stats"


def test_an_unwritable_audit_log_is_one_rc006_and_refuses_calls(tmp_path: Path) -> None:
    (tmp_path / "not-a-dir").write_text("")
    result = _load(tmp_path, '[audit]\nlog = "not-a-dir/audit.jsonl"\n')
    assert [d.code for d in result.report.diagnostics if d.code == "RC006"] == ["RC006"]
    ctx = ToolContext(surface="router", agent="t")
    envelope = asyncio.run(dispatch_tool(result.registry, "text_stats", {"text": "a b"}, ctx))
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "denied"
