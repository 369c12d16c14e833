"""A distribution whose entry-point group is a near miss of ``reyn.plugins`` (``reyn_plugins``,
``reyn-plugins``, ``Reyn.Plugins``, ``reyn.plugin``) is not loaded — and ``reyn doctor`` says so with the
fix, instead of the plugin silently never appearing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reyn_core.loading.step2_discovery.discovery import discover


def fake_dist(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name.replace('-', '_')}-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text(entry_points)


@pytest.mark.parametrize(
    "group", ["reyn_plugins", "reyn-plugins", "Reyn.Plugins", "reyn.plugin", "reyn.plugns"]
)
def test_a_near_miss_group_is_recorded_and_its_plugin_is_not_discovered(tmp_path, group):
    fake_dist(tmp_path, "rtp-typo", f"[{group}]\ntypo = rtp_typo.plugin\n")
    found = discover(path=[str(tmp_path)])
    assert found.plugins == ()
    (miss,) = found.near_misses
    assert (miss.distribution, miss.version, miss.group, miss.names) == (
        "rtp-typo",
        "1.0.0",
        group,
        ("typo",),
    )


@pytest.mark.parametrize("group", ["console_scripts", "pytest11", "reyn.tools", "llm"])
def test_unrelated_groups_are_not_near_misses(tmp_path, group):
    fake_dist(tmp_path, "rtp-other", f"[{group}]\nreyn = reyn_other:main\n")
    found = discover(path=[str(tmp_path)])
    assert found.near_misses == () and found.plugins == ()


def test_the_exact_group_beside_a_near_miss_is_still_discovered(tmp_path):
    fake_dist(
        tmp_path, "rtp-both", "[reyn.plugins]\ngood = rtp_both.good\n\n[reyn_plugins]\nbad = rtp_both.bad\n"
    )
    found = discover(path=[str(tmp_path)])
    assert [p.plugin_id for p in found.plugins] == ["good"]
    assert [m.group for m in found.near_misses] == ["reyn_plugins"]


def test_doctor_reports_rd005_with_the_fix(tmp_path, reyn_cli):
    site = tmp_path / "site"
    fake_dist(site, "rtp-typo", "[reyn-plugins]\ntypo = rtp_typo.plugin\n")
    proc = reyn_cli("doctor", "--json", cwd=tmp_path, env={"PYTHONPATH": str(site)}, timeout=120)
    assert proc.returncode == 0, proc.stderr  # a warning: nothing enabled is broken
    (finding,) = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "RD005"]
    assert finding["severity"] == "warning"
    assert (
        "rtp-typo 1.0.0 declares entry point(s) typo in group 'reyn-plugins', not 'reyn.plugins'"
        in finding["message"]
    )
    assert 'entry-points."reyn.plugins"' in finding["hint"]
