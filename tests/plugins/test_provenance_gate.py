"""Provenance in the loader: pins, the enforced lock, editable installs, tampering — all decided
before the plugin's module is imported. Real wheels, real editable installs, real file edits."""

from __future__ import annotations

import base64
import hashlib
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import PROBE, PluginDist, build_wheels, tool_plugin

DISTS = {
    "pinned": PluginDist("rtp-pinned", "pinned", tool_plugin(["pinned_tool"])),
    "relocked": PluginDist("rtp-relocked", "relocked", tool_plugin(["relocked_tool"])),
    "clean": PluginDist("rtp-clean", "clean", tool_plugin(["clean_tool"])),
}
EDITABLE = PluginDist("rtp-edit", "edit", tool_plugin(["edit_tool"]))


def _tamper(path: Path) -> None:
    """Change one byte of the module (it stays valid Python)."""
    data = path.read_bytes()
    i = data.index(b"Echo the text")
    path.write_bytes(data[:i] + b"X" + data[i + 1 :])


def _rewrite_record(site: Path, dist_info: str, rel: str) -> None:
    """Make RECORD agree with the tampered file, as a careful attacker would."""
    record = site / dist_info / "RECORD"
    digest = (
        base64.urlsafe_b64encode(hashlib.sha256((site / rel).read_bytes()).digest()).rstrip(b"=").decode()
    )
    size = (site / rel).stat().st_size
    lines = [
        f"{rel},sha256={digest},{size}" if line.split(",")[0] == rel else line
        for line in record.read_text().splitlines()
    ]
    record.write_text("\n".join(lines) + "\n")


class World:
    """One venv with three wheel plugins and one editable plugin, locked, then tampered."""

    def __init__(self, venv: Any, work: Path, cache: Path, probe: Path, wheels: dict[str, Path]) -> None:
        self.venv, self.work, self.cache, self.probe, self.wheels = venv, work, cache, probe, wheels
        self.digests: dict[str, str] = {}

    def env(self) -> dict[str, str]:
        return {"REYN_CACHE_DIR": str(self.cache), "XDG_CONFIG_HOME": str(self.work / "xdg")}

    def profile(self, text: str) -> Path:
        path = self.work / "reyn.toml"
        path.write_text(textwrap.dedent(text))
        return path

    def reyn(self, *args: str) -> Any:
        return self.venv.run("reyn", *args, cwd=self.work, env=self.env())

    def probe_load(self, profile: str) -> dict[str, Any]:
        proc = self.venv.run("python", self.probe, self.profile(profile), cwd=self.work, env=self.env())
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)


ALL = '["pinned", "relocked", "clean", "edit"]'


@pytest.fixture(scope="module")
def world(make_module_venv, tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("dists")
    folders = {k: d.write(root) for k, d in DISTS.items()}
    built = build_wheels(folders.values(), root / "wheels")
    wheels = {k: next(w for w in built if w.name.startswith(d.import_name + "-")) for k, d in DISTS.items()}
    venv = make_module_venv("provenance")
    venv.install("reyn-core", *wheels.values())
    venv.install(EDITABLE.write(root), editable=True)
    probe = tmp_path_factory.mktemp("probe") / "probe.py"
    probe.write_text(PROBE)
    w = World(venv, tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("cache"), probe, wheels)

    w.profile(f"[plugins]\nenable = {ALL}\n")
    listed = w.reyn("plugins", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    w.digests = {p["id"]: p["origin"]["tree_digest"] for p in json.loads(listed.stdout)["plugins"]}
    locked = w.reyn("plugins", "lock")
    assert locked.returncode == 0, locked.stdout + locked.stderr
    w.profile('[plugins]\nenable = ["clean"]\n')
    assert w.reyn("plugins", "lock", "--lock-file", "clean-only.lock").returncode == 0

    site = venv.site_packages
    _tamper(site / "rtp_pinned" / "plugin.py")
    _tamper(site / "rtp_relocked" / "plugin.py")
    _rewrite_record(site, "rtp_relocked-1.0.0.dist-info", "rtp_relocked/plugin.py")
    return w


def info(result: dict[str, Any], plugin_id: str) -> dict[str, Any]:
    return next(p for p in result["plugins"] if p["id"] == plugin_id and p["enabled"])


def codes(result: dict[str, Any], plugin_id: str) -> list[str]:
    return [d["code"] for d in info(result, plugin_id)["diagnostics"]]


def test_same_wheel_in_two_venvs_gives_the_same_digest(world, make_module_venv):
    other = make_module_venv("second")
    other.install("reyn-core", world.wheels["clean"])
    world.profile('[plugins]\nenable = ["clean"]\n')
    proc = other.run("reyn", "plugins", "show", "clean", "--json", cwd=world.work, env=world.env())
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["origin"]["tree_digest"] == world.digests["clean"]
    assert shown["origin"]["source_kind"] == "wheel"


def test_one_changed_byte_refuses_a_pinned_plugin_before_import(world):
    result = world.probe_load(f"""
        [plugins]
        enable = ["pinned", "clean"]
        [plugins.pinned]
        digest = "{world.digests["pinned"]}"
        """)
    pinned = info(result, "pinned")
    assert pinned["status"] == "refused" and "RP001" in codes(result, "pinned")
    assert world.digests["pinned"] in next(
        d["message"] for d in pinned["diagnostics"] if d["code"] == "RP001"
    )
    assert "RP002" in codes(result, "pinned")  # the installed file no longer matches RECORD either
    assert "rtp_pinned.plugin" not in result["modules"]
    assert "pinned_tool" not in result["tools"] and "clean_tool" in result["router"]


def test_matching_pin_loads_the_plugin(world):
    result = world.probe_load(f"""
        [plugins]
        enable = ["clean"]
        [plugins.clean]
        digest = "{world.digests["clean"]}"
        """)
    assert info(result, "clean")["status"] == "loaded" and codes(result, "clean") == []


def test_record_rewritten_to_match_the_tampered_file_is_still_refused_by_the_lock(world):
    result = world.probe_load(f"""
        [plugins]
        enable = {ALL}
        [lock]
        enforce = true
        """)
    relocked = info(result, "relocked")
    assert relocked["status"] == "refused" and codes(result, "relocked") == ["RL001"]
    assert "rtp_relocked/plugin.py" in relocked["diagnostics"][0]["message"]
    assert "rtp_relocked.plugin" not in result["modules"]
    assert info(result, "clean")["status"] == "loaded" and "clean_tool" in result["router"]
    assert info(result, "edit")["status"] == "loaded"


def test_enforced_lock_refuses_a_plugin_missing_from_the_lock_with_RL002(world):
    result = world.probe_load("""
        [plugins]
        enable = ["clean", "edit"]
        [lock]
        path = "clean-only.lock"
        enforce = true
        """)
    assert info(result, "clean")["status"] == "loaded"
    assert info(result, "edit")["status"] == "refused" and codes(result, "edit") == ["RL002"]
    assert "rtp_edit.plugin" not in result["modules"]


def test_enforced_lock_that_does_not_exist_refuses_every_plugin_with_RL003(world):
    result = world.probe_load("""
        [plugins]
        enable = ["clean"]
        [lock]
        path = "nowhere.lock"
        enforce = true
        """)
    assert info(result, "clean")["status"] == "refused" and codes(result, "clean") == ["RL003"]


def test_enforced_lock_refuses_a_plugin_whose_tools_changed(world):
    result = world.probe_load("""
        [plugins]
        enable = ["clean"]
        [plugins.clean]
        prefix = "c_"
        [lock]
        path = "clean-only.lock"
        enforce = true
        """)
    clean = info(result, "clean")
    assert clean["status"] == "refused" and codes(result, "clean") == ["RL001"]
    assert "c_clean_tool" in clean["diagnostics"][0]["message"]
    assert not [t for t in result["tools"] if "clean" in t]


def test_editable_install_is_marked_editable(world):
    result = world.probe_load('[plugins]\nenable = ["edit"]\n')
    assert info(result, "edit")["origin"]["source_kind"] == "editable"
    assert info(result, "edit")["origin"]["digest_scope"] == "source-tree"
    assert result["tools"]["edit_tool"]["source_kind"] == "editable"


def test_strict_profile_refuses_an_editable_install_before_import(world):
    result = world.probe_load("""
        [plugins]
        enable = ["edit", "clean"]
        [provenance]
        allow_editable = false
        """)
    assert info(result, "edit")["status"] == "refused" and codes(result, "edit") == ["RP003"]
    assert "rtp_edit.plugin" not in result["modules"]
    assert info(result, "clean")["status"] == "loaded"


def test_audit_after_tampering_exits_1_and_names_the_changed_files(world):
    world.profile(f"[plugins]\nenable = {ALL}\n")
    proc = world.reyn("plugins", "audit")
    assert proc.returncode == 1, proc.stderr
    assert "rtp_pinned/plugin.py" in proc.stdout and "rtp_relocked/plugin.py" in proc.stdout
    assert "clean:" not in proc.stdout
    as_json = json.loads(world.reyn("plugins", "audit", "--json").stdout)
    kinds = {(d["plugin"], d["kind"]) for d in as_json["drift"]}
    assert ("relocked", "file_changed") in kinds and ("pinned", "record_mismatch") in kinds
    assert not any(p == "clean" for p, _ in kinds) and as_json["ok"] is False
