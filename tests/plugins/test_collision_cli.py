"""Collisions through the real ``reyn`` command: the suggested fix makes a sensible name, a call of
a collided name says it collided, and ``tools list`` says which call-layer check hides a tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_distkit import tool_plugin
from site_plugin import install_site_plugin

WEATHER = """
from reyn_core import hookimpl, tool

REYN_API = 1

@tool(name="weather_forecast", cluster="{pid}", purity="read_only")
def forecast(city: str) -> str:
    \"\"\"The forecast for a city.\"\"\"
    return "{pid}: sunny in " + city

@tool(name="{pid}_alerts", cluster="{pid}", purity="read_only")
def alerts() -> str:
    \"\"\"Weather alerts.\"\"\"
    return "none"

@hookimpl
def reyn_register_tools(register, settings):
    register(forecast)
    register(alerts)
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    for pid in ("weather", "openmeteo"):
        install_site_plugin(site, pid, WEATHER.format(pid=pid))
    return site


@pytest.fixture
def run(reyn_cli):  # type: ignore[no-untyped-def]
    """``reyn ARGV`` with the plugins installed in ``site`` importable."""

    def run(site: Path, cwd: Path, *argv: str):  # type: ignore[no-untyped-def]
        return reyn_cli(*argv, cwd=cwd, env={"PYTHONPATH": str(site), "REYN_CACHE_DIR": str(cwd / "cache")})

    return run


def _doctor_hint(run, site: Path, cwd: Path) -> str:
    proc = run(site, cwd, "doctor", "--json")
    (hint,) = {d["hint"] for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "RT004"}
    return hint


def test_the_suggested_prefix_goes_on_the_plugin_whose_name_it_does_not_repeat(site, tmp_path, run):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["weather", "openmeteo"]\n')
    hint = _doctor_hint(run, site, tmp_path)
    assert "weather_weather_forecast" not in hint
    assert '[plugins.openmeteo] prefix = "openmeteo_"' in hint and "'openmeteo_weather_forecast'" in hint
    assert "tools.exclude" in hint

    # Following the printed prefix fix gives both tools, under the names the hint promised.
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["weather", "openmeteo"]\n\n[plugins.openmeteo]\nprefix = "openmeteo_"\n'
    )
    listed = run(site, tmp_path, "tools", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    names = {t["name"] for t in json.loads(listed.stdout)}
    assert {"weather_forecast", "openmeteo_weather_forecast"} <= names


def test_following_the_exclude_fix_keeps_the_other_plugins_tool(site, tmp_path, run):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["weather", "openmeteo"]\n')
    hint = _doctor_hint(run, site, tmp_path)
    owner = hint.split("to plugins.")[1].split(".tools.exclude")[0]
    (tmp_path / "reyn.toml").write_text(
        f'[plugins]\nenable = ["weather", "openmeteo"]\n\n[plugins.{owner}.tools]\n'
        'exclude = ["weather_forecast"]\n'
    )
    called = run(site, tmp_path, "tools", "call", "weather_forecast", "city=Oslo")
    assert called.returncode == 0, called.stderr
    other = {"weather", "openmeteo"} - {owner}
    assert json.loads(called.stdout)["data"] == f"{other.pop()}: sunny in Oslo"


def test_calling_a_collided_name_says_it_collided_and_how_to_fix_it(site, tmp_path, run):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["weather", "openmeteo"]\n')
    proc = run(site, tmp_path, "tools", "call", "weather_forecast", "city=Oslo")
    assert proc.returncode == 1
    envelope = json.loads(proc.stdout)
    assert envelope["error"]["kind"] == "not_found"
    hint = envelope["host_hint"]
    assert {p["plugin"] for p in hint["plugins"]} == {"weather", "openmeteo"}
    assert hint["collision"] and "prefix" in hint["collision"]
    assert "not registered because its name collided (RT004)" in proc.stderr
    assert "'weather'" in proc.stderr and "'openmeteo'" in proc.stderr
    # The model-facing error names no plugin (host_hint is for the operator only).
    assert "openmeteo" not in json.dumps(envelope["error"])


def test_a_name_that_never_collided_gets_no_collision_hint(site, tmp_path, run):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["weather", "openmeteo"]\n')
    proc = run(site, tmp_path, "tools", "call", "weather_alertz")
    assert proc.returncode == 1
    assert "collided" not in proc.stderr and "host_hint" not in json.loads(proc.stdout)


# plain_op, always there, and needs_key, whose own available() says no
AVAILABLE = tool_plugin(
    ["plain_op"],
    cluster="keyed",
    also=["needs_key"],
    extra="""
    @tool(name="needs_key", cluster="keyed", purity="read_only", available=lambda ctx: False)
    def needs_key() -> str:
        \"\"\"Needs an API key.\"\"\"
        return "x"
    """,
)


def test_tools_list_says_which_call_layer_check_hides_a_tool(tmp_path, run):
    site = tmp_path / "site"
    install_site_plugin(site, "keyed", AVAILABLE)
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["keyed"]\n')
    proc = run(site, tmp_path, "tools", "list")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    # Both are hidden by the call layer for different reasons: needs_key's own available() says no
    # on the router; the phase's allowed_ops (the default, file and ask_user) leave out both.
    assert "no (call: available)  no (call: allowed_ops)" in rows["needs_key"]
    assert "yes" in rows["plain_op"] and "no (call: allowed_ops)" in rows["plain_op"]
    data = {r["name"]: r for r in json.loads(run(site, tmp_path, "tools", "list", "--json").stdout)}
    assert data["plain_op"]["phase"]["rule"] == "allowed_ops"
    assert data["needs_key"]["router"]["rule"] == "available"
