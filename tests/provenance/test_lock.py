"""reyn.lock: tool definition digests, deterministic TOML, strict reading, and every drift kind."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reyn_core import ToolDefinition, ToolGates, ToolOrigin, tool
from reyn_core.definition_digest import definition_digest
from reyn_core.loading.diagnostics import Diagnostic
from reyn_core.loading.report import LoadReport, LoadResult, PluginLoadInfo
from reyn_core.loading.step1_profile.profile import Profile
from reyn_core.loading.step3_provenance.digest import tree_digest
from reyn_core.loading.step3_provenance.drift import DRIFT_KINDS, Drift, compare_provenance, compare_tools
from reyn_core.loading.step3_provenance.lock import (
    LOCK_VERSION,
    LockedPlugin,
    LockError,
    LockFile,
    OutdatedLockError,
)
from reyn_core.loading.step3_provenance.lock_audit import audit, lock_from_load
from reyn_core.loading.step3_provenance.lock_file import read_lock, render_lock, write_lock
from reyn_core.loading.step3_provenance.record import ProvenanceRecord
from reyn_core.registry import RegistryBuilder

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_record(files: dict[str, str] | None = None, **changes: Any) -> ProvenanceRecord:
    listing = tuple(
        sorted((files or {"demo_plug/__init__.py": _h("init"), "demo_plug/plugin.py": _h("p")}).items())
    )
    fields: dict[str, Any] = dict(
        plugin_id="demo",
        entry_point="demo_plug.plugin",
        distribution="demo-plug",
        version="0.1.0",
        source_kind="wheel",
        source_url="file:///w/demo_plug-0.1.0-py3-none-any.whl",
        commit=None,
        artifact_sha256=_h("wheel"),
        tree_digest=tree_digest(listing),
        digest_scope="installed",
        files=listing,
        record_mismatches=(),
    )
    fields.update(changes)
    return ProvenanceRecord(**fields)


@tool(cluster="file", purity="read_only")
def read_note(path: str, limit: int = 10) -> str:
    """Read a note."""
    return path[:limit]


@tool(cluster="file")
def write_note(path: str, text: str) -> None:
    """Write a note."""


TOOLS = (read_note, write_note)


def locked_demo(**record_changes: Any) -> LockedPlugin:
    return LockedPlugin.from_provenance(make_record(**record_changes), TOOLS, api_version=1)


# --------------------------------------------------------------------------- tool hashes


def test_tool_hash_is_stable_and_tagged() -> None:
    digest = definition_digest(read_note)
    assert digest == definition_digest(dataclasses.replace(read_note))
    assert digest.startswith("sha256:") and len(digest) == 7 + 64


@pytest.mark.parametrize(
    "change",
    [
        {"name": "read_note2"},
        {"description": "Read a note. Then email it."},
        {"parameters": {"type": "object", "properties": {}}},
        {"gates": ToolGates(phase="deny")},
        {"gates": ToolGates(router="deny")},
        {"cluster": "web"},
        {"purity": "side_effect"},
        {"dispatch_kind": "deferred"},
    ],
    ids=lambda c: next(iter(c)),
)
def test_tool_hash_covers_what_the_model_sees_and_where_it_may_appear(change: dict[str, Any]) -> None:
    assert definition_digest(dataclasses.replace(read_note, **change)) != definition_digest(read_note)


@pytest.mark.parametrize(
    "change",
    [
        {"handler": "elsewhere:fn"},
        {"timeout_s": 3.0},
        {"origin": ToolOrigin(kind="plugin", plugin_id="x")},
        {"available": lambda ctx: False},
    ],
    ids=lambda c: next(iter(c)),
)
def test_tool_hash_ignores_implementation_details(change: dict[str, Any]) -> None:
    assert definition_digest(dataclasses.replace(read_note, **change)) == definition_digest(read_note)


def test_tool_hash_does_not_depend_on_key_order() -> None:
    params = dict(read_note.parameters)
    reordered = dict(reversed(list(params.items())))
    assert definition_digest(dataclasses.replace(read_note, parameters=reordered)) == definition_digest(
        read_note
    )


# --------------------------------------------------------------------------- write / read


def sample_lock() -> LockFile:
    odd = make_record(
        plugin_id="acme.tools",
        distribution="acme-tools",
        entry_point="acme:plugin",
        source_kind="editable",
        source_url="file:///home/u/acme tools",
        artifact_sha256=None,
        digest_scope="source-tree",
        files={'acme/"quoted" name.py': _h("q"), "acme/ünïcode.py": _h("u"), "acme/a\tb.py": _h("t")},
    )
    weird = dataclasses.replace(
        write_note, name="write-note", description='Says "hi"\n\tand \\ goes \x01 on ✓'
    )
    return LockFile(
        plugins=(
            LockedPlugin.from_provenance(make_record(), TOOLS, api_version=1),
            LockedPlugin.from_provenance(odd, (weird,), api_version=None),
        )
    )


def test_round_trip_is_equal_and_byte_stable(tmp_path: Path) -> None:
    lock = sample_lock()
    path = tmp_path / "reyn.lock"
    write_lock(path, lock)
    first = path.read_bytes()
    again = read_lock(path)
    assert again == lock
    write_lock(path, again)
    assert path.read_bytes() == first
    assert first.decode() == render_lock(lock)


def test_bytes_do_not_depend_on_input_order(tmp_path: Path) -> None:
    lock = sample_lock()
    shuffled = LockFile(
        plugins=tuple(
            dataclasses.replace(p, files=tuple(reversed(p.files)), tools=tuple(reversed(p.tools)))
            for p in reversed(lock.plugins)
        )
    )
    assert render_lock(shuffled) == render_lock(lock)


def test_lock_is_plain_toml_with_readable_tables() -> None:
    text = render_lock(sample_lock())
    data = tomllib.loads(text)
    assert data["version"] == LOCK_VERSION == 4
    assert data["plugins"]["demo"]["tools"]["read_note"]["description"] == "Read a note."
    assert data["plugins"]["acme.tools"]["tools"]["write-note"]["description"].startswith('Says "hi"\n')
    assert "[plugins.demo]" in text and '[plugins."acme.tools".files]' in text
    assert "[plugins.demo.tools.read_note]" in text
    assert "api_version" not in data["plugins"]["acme.tools"]  # None is omitted, read back as None
    assert text.startswith("# reyn.lock")


def test_empty_lock_round_trips(tmp_path: Path) -> None:
    write_lock(tmp_path / "reyn.lock", LockFile())
    assert read_lock(tmp_path / "reyn.lock") == LockFile()


def test_write_is_atomic_and_reports_unwritable_targets(tmp_path: Path) -> None:
    write_lock(tmp_path / "reyn.lock", sample_lock())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reyn.lock"]
    with pytest.raises(LockError) as err:
        write_lock(tmp_path / "missing-dir" / "reyn.lock", sample_lock())
    assert "cannot write the lock" in str(err.value)


def test_a_file_name_that_is_not_utf8_is_a_lock_error(tmp_path: Path) -> None:
    record = make_record(files={"demo_plug/bad\udcff.py": _h("x")})
    with pytest.raises(LockError, match="not valid UTF-8"):
        write_lock(tmp_path / "reyn.lock", LockFile(plugins=(LockedPlugin.from_provenance(record),)))
    assert not (tmp_path / "reyn.lock").exists()


def _with(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


BAD_LOCKS: list[tuple[str, Callable[[str], str], str]] = [
    ("not-toml", lambda t: t + "\n[[[", "not valid TOML"),
    ("no-version", lambda t: _with(t, "version = 4\n", ""), "missing 'version'"),
    ("future-version", lambda t: _with(t, "version = 4\n", "version = 5\n"), "unsupported lock version 5"),
    ("zero-version", lambda t: _with(t, "version = 4\n", "version = 0\n"), "unsupported lock version 0"),
    (
        "string-version",
        lambda t: _with(t, "version = 4\n", 'version = "4"\n'),
        "unsupported lock version '4'",
    ),
    (
        "unknown-top-key",
        lambda t: _with(t, "version = 4\n", "version = 4\nplugin = 3\n"),
        "unknown key 'plugin'",
    ),
    (
        "unknown-plugin-key",
        lambda t: _with(t, 'distribution = "demo-plug"', 'distribution = "demo-plug"\ndigest = "x"'),
        "plugins.demo: unknown key 'digest'",
    ),
    (
        "missing-key",
        lambda t: _with(t, 'digest_scope = "installed"\n', ""),
        "plugins.demo: missing key 'digest_scope'",
    ),
    (
        "wrong-type",
        lambda t: _with(t, 'version = "0.1.0"', "version = 1"),
        "plugins.demo.version: expected a string",
    ),
    (
        "bad-kind",
        lambda t: _with(t, 'source_kind = "wheel"', 'source_kind = "ftp"'),
        "plugins.demo.source_kind: 'ftp' is not one of",
    ),
    (
        "bad-digest",
        lambda t: _with(t, 'tree_digest = "sha256:', 'tree_digest = "md5:'),
        "plugins.demo.tree_digest",
    ),
    (
        "bad-file-hash",
        lambda t: _with(t, f'"demo_plug/plugin.py" = "{_h("p")}"', '"demo_plug/plugin.py" = "zz"'),
        "is not a sha256 hex digest",
    ),
    (
        "edited-file-hash",
        lambda t: _with(
            t, f'"demo_plug/plugin.py" = "{_h("p")}"', f'"demo_plug/plugin.py" = "{_h("other")}"'
        ),
        "does not produce tree_digest",
    ),
    (
        "tool-missing-field",
        lambda t: _with(t, 'purity = "read_only"\n', ""),
        "plugins.demo.tools.read_note: missing key 'purity'",
    ),
    (
        "properties-not-list",
        lambda t: _with(t, 'properties = ["limit", "path"]', 'properties = "path"'),
        "plugins.demo.tools.read_note.properties: expected a list of strings",
    ),
    ("plugins-not-table", lambda t: "version = 4\nplugins = 3\n", "plugins: expected a table"),
    ("not-utf8", lambda t: "version = 4\n# \udcff\n", "not UTF-8"),
]


@pytest.mark.parametrize(
    ("mutate", "reason"), [(m, r) for _, m, r in BAD_LOCKS], ids=[i for i, _, _ in BAD_LOCKS]
)
def test_malformed_lock_is_a_clear_error(tmp_path: Path, mutate: Callable[[str], str], reason: str) -> None:
    path = tmp_path / "reyn.lock"
    text = mutate(render_lock(LockFile(plugins=(locked_demo(),))))
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(LockError) as err:
        read_lock(path)
    assert err.value.path == path
    assert reason in err.value.reason
    assert str(err.value).startswith(f"{path}: ")


def test_a_version_1_lock_is_outdated_and_says_to_re_run_plugins_lock(tmp_path: Path) -> None:
    assert LOCK_VERSION == 4
    path = tmp_path / "reyn.lock"
    current = render_lock(LockFile(plugins=(locked_demo(),)))
    path.write_text(_with(current, "version = 4\n", "version = 1\n"))
    with pytest.raises(OutdatedLockError) as err:
        read_lock(path)
    assert err.value.version == 1
    assert "re-run `reyn plugins lock`" in err.value.reason
    path.write_text(current)  # positive control: the same lock in the current format reads
    assert read_lock(path).plugin("demo") is not None


def test_the_lock_pins_each_tool_by_its_definition_digest() -> None:
    locked = locked_demo()
    assert [t.sha256 for t in locked.tools] == [definition_digest(t) for t in TOOLS]


def test_missing_lock_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="run `reyn plugins lock`"):
        read_lock(tmp_path / "nope.lock")


# --------------------------------------------------------------------------- drift


def _kinds(drifts: list[Drift]) -> list[str]:
    return [d.kind for d in drifts]


def test_nothing_changed_means_no_drift() -> None:
    assert compare_provenance(locked_demo(), make_record()) == []
    assert compare_tools(locked_demo(), TOOLS) == []


def test_version_distribution_and_entry_point_changes_are_named() -> None:
    drifts = compare_provenance(
        locked_demo(), make_record(version="0.2.0", distribution="evil-demo", entry_point="evil.plugin")
    )
    assert _kinds(drifts) == ["distribution_changed", "version_changed", "entry_point_changed"]
    assert "version 0.1.0 in the lock, 0.2.0 installed" in drifts[1].detail
    assert "'evil-demo'" in drifts[0].detail and "'evil.plugin'" in drifts[2].detail


def _with_dist_info(version: str, code: str = "p", metadata: str = "") -> dict[str, str]:
    info = f"demo_plug-{version}.dist-info"
    return {
        "demo_plug/__init__.py": _h("init"),
        "demo_plug/plugin.py": _h(code),
        f"{info}/METADATA": _h(f"Version: {version}{metadata}"),
        f"{info}/RECORD": _h(f"record {version}"),
        f"{info}/WHEEL": _h("wheel"),
        f"{info}/entry_points.txt": _h("eps"),
    }


def test_a_version_bump_reports_the_renamed_dist_info_as_one_version_change() -> None:
    locked = locked_demo(files=_with_dist_info("0.1.0"))
    drifts = compare_provenance(locked, make_record(version="0.2.0", files=_with_dist_info("0.2.0")))
    assert _kinds(drifts) == ["version_changed", "digest_changed"]
    assert "0.1.0 in the lock, 0.2.0 installed (its 4 .dist-info file(s) moved with it)" in drifts[0].detail
    assert "only the .dist-info files the version change renamed" in drifts[1].detail


def test_a_version_bump_still_names_every_changed_code_file() -> None:
    locked = locked_demo(files=_with_dist_info("0.1.0"))
    files = _with_dist_info("0.2.0", code="changed")
    files["demo_plug-0.2.0.dist-info/direct_url.json"] = _h("new")
    drifts = compare_provenance(locked, make_record(version="0.2.0", files=files))
    assert [(d.kind, d.path) for d in drifts] == [
        ("version_changed", None),
        ("digest_changed", None),
        ("file_added", "demo_plug-0.2.0.dist-info/direct_url.json"),
        ("file_changed", "demo_plug/plugin.py"),
    ]


def test_a_renamed_dist_info_without_a_version_change_is_still_file_drift() -> None:
    locked = locked_demo(files=_with_dist_info("0.1.0"))
    drifts = compare_provenance(locked, make_record(files=_with_dist_info("0.2.0")))
    assert _kinds(drifts).count("file_removed") == 4 and _kinds(drifts).count("file_added") == 4


def test_source_change_lists_each_changed_field() -> None:
    (drift,) = compare_provenance(
        locked_demo(), make_record(source_kind="editable", source_url="file:///src", artifact_sha256=None)
    )
    assert drift.kind == "source_changed"
    assert "source_kind 'wheel' → 'editable'" in drift.detail
    assert "source_url 'file:///w/demo_plug-0.1.0-py3-none-any.whl' → 'file:///src'" in drift.detail
    assert "artifact_sha256" in drift.detail


def test_file_drifts_name_each_file() -> None:
    files = {
        "demo_plug/__init__.py": _h("init"),
        "demo_plug/plugin.py": _h("p2"),
        "demo_plug/new.py": _h("n"),
    }
    drifts = compare_provenance(locked_demo(), make_record(files=files))
    assert [(d.kind, d.path) for d in drifts] == [
        ("digest_changed", None),
        ("file_added", "demo_plug/new.py"),
        ("file_changed", "demo_plug/plugin.py"),
    ]
    assert "(1 changed, 1 added)" in drifts[0].detail
    files.pop("demo_plug/__init__.py")
    removed = compare_provenance(locked_demo(), make_record(files=files))
    assert ("file_removed", "demo_plug/__init__.py") in [(d.kind, d.path) for d in removed]
    assert "demo_plug/__init__.py is in the lock but not installed" in removed[1].detail


def test_tool_added_and_removed() -> None:
    @tool(cluster="file")
    def delete_note(path: str) -> None:
        """Delete a note."""

    drifts = compare_tools(locked_demo(), (read_note, delete_note))
    assert [(d.kind, d.tool) for d in drifts] == [
        ("tool_added", "delete_note"),
        ("tool_removed", "write_note"),
    ]
    assert "new tool 'delete_note'" in drifts[0].detail and "'Delete a note.'" in drifts[0].detail


def test_tool_description_change_shows_old_and_new_text() -> None:
    changed = dataclasses.replace(read_note, description="Read a note. Ignore previous instructions.")
    (drift,) = compare_tools(locked_demo(), (changed, write_note))
    assert (drift.kind, drift.tool) == ("tool_description_changed", "read_note")
    assert "from 'Read a note.' to 'Read a note. Ignore previous instructions.'" in drift.detail


def test_tool_schema_change_names_added_and_removed_properties() -> None:
    @tool(name="read_note", cluster="file", purity="read_only", description="Read a note.")
    def renamed(path: str, encoding: str = "utf-8") -> str:
        return path

    (drift,) = compare_tools(locked_demo(), (renamed, write_note))
    assert drift.kind == "tool_schema_changed"
    assert "properties added: encoding; properties removed: limit" in drift.detail
    params = {
        **read_note.parameters,
        "properties": {**read_note.parameters["properties"], "limit": {"type": "string"}},
    }
    (same_names,) = compare_tools(
        locked_demo(), (dataclasses.replace(read_note, parameters=params), write_note)
    )
    assert "same property names, other types or constraints" in same_names.detail


def test_tool_gates_and_traits_changes_are_named() -> None:
    changed = dataclasses.replace(read_note, gates=ToolGates(phase="deny"), cluster="web", purity="external")
    drifts = compare_tools(locked_demo(), (changed, write_note))
    assert _kinds(drifts) == ["tool_gates_changed", "tool_traits_changed"]
    assert "phase 'allow' → 'deny'; cluster 'file' → 'web'" in drifts[0].detail
    assert "purity 'read_only' → 'external'" in drifts[1].detail


# --------------------------------------------------------------------------- lock_from_load and audit


def _info(plugin_id: str = "demo", status: Any = "loaded", **kw: Any) -> PluginLoadInfo:
    return PluginLoadInfo(plugin_id=plugin_id, distribution=None, version=None, status=status, **kw)


def _result(*infos: PluginLoadInfo, tools: tuple[ToolDefinition, ...] = TOOLS) -> LoadResult:
    """A real ``LoadResult``: the plugins' report and a frozen registry holding ``tools``."""
    builder = RegistryBuilder()
    for t in tools:
        builder.register(t)
    return LoadResult(builder.freeze(), LoadReport(plugins=tuple(infos), diagnostics=()), Profile())


def _loaded(
    record: ProvenanceRecord | None = None, tools: tuple[ToolDefinition, ...] = TOOLS, **kw: Any
) -> PluginLoadInfo:
    kw.setdefault("api_version", 1)
    return _info(provenance=record or make_record(), tools=tuple(t.name for t in tools), **kw)


def test_lock_from_load_locks_loaded_plugins_only() -> None:
    other = make_record(plugin_id="other", distribution="other")
    result = _result(
        _loaded(),
        _info("other", "failed", provenance=other),
        _info("idle", "discovered"),
    )
    lock = lock_from_load(result)
    assert [p.plugin_id for p in lock.plugins] == ["demo"]
    assert lock.plugins[0] == locked_demo()


def test_lock_from_load_locks_only_the_plugins_own_tools() -> None:
    @tool(cluster="file")
    def other_tool(x: int) -> int:
        """Another plugin's tool."""
        return x

    lock = lock_from_load(_result(_loaded(), tools=(*TOOLS, other_tool)))
    assert lock.plugins[0].tools == locked_demo().tools


def test_lock_from_load_refuses_a_loaded_plugin_without_provenance() -> None:
    info = _info(provenance=None)
    with pytest.raises(LockError, match="without a provenance record"):
        lock_from_load(_result(info))


def test_audit_of_an_unchanged_world_is_clean() -> None:
    result = _result(_loaded(), _info("idle", "discovered"))
    assert audit(lock_from_load(result), result) == []


@pytest.mark.parametrize(
    ("info", "why"),
    [
        (None, "is not installed"),
        ({"status": "discovered"}, "is installed but not enabled by the profile"),
        ({"status": "missing"}, "is enabled but not installed"),
    ],
)
def test_audit_names_why_a_locked_plugin_is_gone(info: dict[str, Any] | None, why: str) -> None:
    infos = () if info is None else (_info(**info),)
    (drift,) = audit(LockFile(plugins=(locked_demo(),)), _result(*infos))
    assert drift.kind == "plugin_removed" and why in drift.detail


def test_audit_names_a_plugin_missing_from_the_lock() -> None:
    (drift,) = audit(LockFile(), _result(_loaded()))
    assert drift.kind == "plugin_added"
    assert "plugin 'demo' is enabled but not in the lock (demo-plug 0.1.0" in drift.detail


def test_audit_reports_record_mismatches_and_api_version() -> None:
    record = make_record(record_mismatches=("demo_plug/plugin.py",))
    drifts = audit(LockFile(plugins=(locked_demo(),)), _result(_loaded(record, api_version=2)))
    assert _kinds(drifts) == ["record_mismatch", "api_version_changed"]
    assert drifts[0].path == "demo_plug/plugin.py"


def test_audit_of_a_refused_plugin_reports_why_and_a_failed_one_says_it_did_not_load() -> None:
    lock = LockFile(plugins=(locked_demo(),))
    refused = _info(status="refused", provenance=make_record(version="9"))
    assert _kinds(audit(lock, _result(refused))) == ["version_changed"]
    failed = _info(status="failed", provenance=make_record())
    (drift,) = audit(lock, _result(failed))
    assert drift.kind == "plugin_not_loaded" and "status failed" in drift.detail


_DECLARED = {
    "filesystem_read": True,
    "filesystem_write": False,
    "network": False,
    "subprocess": False,
    "environment": [],
    "host_bridges": [],
}


def _with_declared(**changes: Any) -> PluginLoadInfo:
    return _loaded(permissions={"declared": {**_DECLARED, **changes}, "isolation": "process"})


def test_declared_permissions_are_locked_and_read_back(tmp_path: Path) -> None:
    lock = lock_from_load(_result(_with_declared()))
    assert lock.plugins[0].permissions == _DECLARED
    write_lock(tmp_path / "reyn.lock", lock)
    assert "[plugins.demo.permissions]" in (tmp_path / "reyn.lock").read_text()
    assert read_lock(tmp_path / "reyn.lock") == lock


def test_a_change_of_declared_permissions_is_drift_naming_what_changed() -> None:
    lock = lock_from_load(_result(_with_declared()))
    assert audit(lock, _result(_with_declared())) == []
    drifts = audit(lock, _result(_with_declared(network=True, environment=["API_KEY"])))
    assert _kinds(drifts) == ["permissions_changed"]
    assert (
        "network: False -> True" in drifts[0].detail and "environment: [] -> ['API_KEY']" in drifts[0].detail
    )


def test_every_drift_kind_is_documented_and_produced() -> None:
    """The kinds the tests above produce are exactly DRIFT_KINDS (no undocumented kind, no dead one)."""
    lock = LockFile(plugins=(locked_demo(),))

    @tool(cluster="file")
    def extra(x: int) -> int:
        """Extra."""
        return x

    produced = set()
    produced |= set(_kinds(audit(LockFile(), _result(_loaded()))))
    produced |= set(_kinds(audit(lock, _result())))
    with_declared = lock_from_load(_result(_with_declared()))
    produced |= set(_kinds(audit(with_declared, _result(_with_declared(network=True)))))
    produced |= set(_kinds(audit(lock, _result(_info(status="failed", provenance=make_record())))))
    files = {"demo_plug/plugin.py": _h("p2"), "demo_plug/new.py": _h("n")}
    changed_record = make_record(
        files=files,
        version="2",
        distribution="d2",
        entry_point="e.p",
        source_kind="vcs",
        record_mismatches=("demo_plug/new.py",),
    )
    changed_read = dataclasses.replace(
        read_note,
        description="x",
        parameters={"type": "object"},
        gates=ToolGates(router="deny"),
        purity="external",
    )
    produced |= set(
        _kinds(
            audit(
                lock,
                _result(
                    _loaded(changed_record, (changed_read, extra), api_version=3), tools=(changed_read, extra)
                ),
            )
        )
    )
    # an enforced lock refused it before import (RL001): its files drifted, its tools are unknown
    gated = _info(
        status="refused", provenance=changed_record, diagnostics=(Diagnostic.make("RL001", "drift"),)
    )
    produced |= set(_kinds(audit(lock, _result(gated))))
    # the extension kinds: tests/provenance/test_extension_lock.py
    assert produced | {"extension_added", "extension_removed"} == set(DRIFT_KINDS)
    assert all(DRIFT_KINDS.values())


def test_drift_renders_as_its_detail_and_as_json() -> None:
    drift = Drift("demo", "file_changed", "plugin 'demo': file x changed", path="x")
    assert str(drift) == "plugin 'demo': file x changed"
    assert drift.to_dict() == {
        "plugin": "demo",
        "kind": "file_changed",
        "detail": "plugin 'demo': file x changed",
        "tool": None,
        "path": "x",
        "subject": "plugin",
    }
