"""Declared permissions against the profile's grants: a wider grant refuses the plugin, a declared need
left out is reported side by side, malformed declarations and plugins that need host objects are
diagnosed; what is granted works inside the worker (positive controls). Real worker processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext

from .plugin_kit import FILE_TOOLS, declaration, install_package_plugin, isolation_profile

GRANTED = (
    '''
import os
import pathlib
import subprocess

from reyn_core import hookimpl, tool

REYN_API = 1


@tool(purity="read_only")
def env(name: str) -> str | None:
    """The value of an environment variable, or null."""
    return os.environ.get(name)

'''
    + FILE_TOOLS
    + '''


@tool(purity="side_effect")
def run(argv: list[str]) -> str:
    """Run a program."""
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@hookimpl
def reyn_register_tools(register, settings):
    for t in (env, write, read, run):
        register(t)
'''
)


def _load(toml: str) -> Any:
    return host.load(host.Profile.from_toml_text(toml))


def _call(result: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, name, args, ToolContext(surface="cli")))


def _codes(result: Any) -> list[str]:
    return sorted(d.code for d in result.report.diagnostics if d.code.startswith("RJ"))


def _info(result: Any, pid: str) -> Any:
    return next(i for i in result.report.plugins if i.plugin_id == pid)


def _profile(pid: str, grants: str = "", isolation: str = "process") -> str:
    return isolation_profile(pid, isolation) + (f"[plugins.{pid}.grants]\n{grants}\n" if grants else "")


def test_a_grant_wider_than_the_declaration_refuses_the_plugin(site: Path) -> None:
    install_package_plugin(
        site, "narrow", {"__init__.py": GRANTED, "reyn_permissions.toml": declaration(filesystem_read=True)}
    )
    result = _load(_profile("narrow", 'network = true\nenvironment = ["HOME"]'))
    info = _info(result, "narrow")
    assert info.status == "refused" and info.tools == ()
    [wider] = [d for d in info.diagnostics if d.code == "RJ002"]
    assert "network (granted true, declared: no)" in wider.message
    assert "environment ['HOME'] (declared: [])" in wider.message


def test_declared_but_not_granted_is_reported_side_by_side_and_fails_inside(
    site: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "note.txt").write_text("inside")
    install_package_plugin(
        site,
        "needy",
        {
            "__init__.py": GRANTED,
            "reyn_permissions.toml": declaration(filesystem_read=True, environment=["REYN_TEST_TOKEN"]),
        },
    )
    result = _load(_profile("needy"))
    info = _info(result, "needy")
    assert info.status == "loaded"
    [missing] = [d for d in info.diagnostics if d.code == "RJ003"]
    assert missing.severity == "warning"
    assert "read (declared: yes, granted: no)" in missing.message
    assert "environment ['REYN_TEST_TOKEN'] (declared, not granted)" in missing.message
    assert info.permissions["declared"]["filesystem_read"] is True
    assert info.permissions["granted"]["filesystem_read"] == []
    reply = _call(result, "read", {"path": str(data / "note.txt")})
    assert reply["status"] == "error" and "No such file" in reply["error"]["message"]


def test_what_is_granted_works_inside_the_worker(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    data.mkdir()
    out.mkdir()
    os.chmod(out, 0o777)
    (data / "note.txt").write_text("inside")
    monkeypatch.setenv("REYN_TEST_TOKEN", "granted-token")
    monkeypatch.setenv("REYN_TEST_OTHER", "not-granted")
    install_package_plugin(
        site,
        "granted",
        {
            "__init__.py": GRANTED,
            "reyn_permissions.toml": declaration(
                filesystem_read=True, filesystem_write=True, subprocess=True, environment=["REYN_TEST_TOKEN"]
            ),
        },
    )
    grants = f'read = ["{data}"]\nwrite = ["{out}"]\nsubprocess = true\nenvironment = ["REYN_TEST_TOKEN"]'
    result = _load(_profile("granted", grants))
    assert _codes(result) == ["RJ008"]
    assert _call(result, "read", {"path": str(data / "note.txt")})["data"] == "inside"
    assert _call(result, "write", {"path": str(out / "w.txt"), "text": "hi"})["data"] == "written"
    assert (out / "w.txt").read_text() == "hi"
    assert _call(result, "env", {"name": "REYN_TEST_TOKEN"})["data"] == "granted-token"
    assert _call(result, "env", {"name": "REYN_TEST_OTHER"})["data"] is None
    assert _call(result, "run", {"argv": ["/bin/echo", "ran"]})["data"] == "ran\n"
    write_data = _call(result, "write", {"path": str(data / "w.txt"), "text": "no"})
    assert write_data["status"] == "error" and not (data / "w.txt").exists()


def test_without_a_subprocess_grant_no_program_starts(site: Path) -> None:
    install_package_plugin(site, "noexec", {"__init__.py": GRANTED, "reyn_permissions.toml": declaration()})
    result = _load(_profile("noexec"))
    reply = _call(result, "run", {"argv": ["/bin/echo", "ran"]})
    assert reply["status"] == "error" and "Operation not permitted" in reply["error"]["message"]


def test_a_malformed_declaration_is_refused_in_process_too(site: Path) -> None:
    bad = "version = 1\n[permissions]\nnetwrok = true\n"
    install_package_plugin(site, "typo", {"__init__.py": GRANTED, "reyn_permissions.toml": bad})
    for isolation in ("process", "in-process"):
        info = _info(_load(_profile("typo", isolation=isolation)), "typo")
        assert info.status == "refused"
        [diag] = [d for d in info.diagnostics if d.code == "RJ001"]
        assert "unknown keys ['netwrok']" in diag.message


def test_a_plugin_that_needs_host_bridges_or_host_hooks_is_refused_isolation_with_the_reason(
    site: Path,
) -> None:
    install_package_plugin(
        site,
        "bridged",
        {"__init__.py": GRANTED, "reyn_permissions.toml": declaration(host_bridges=["run_skill"])},
    )
    info = _info(_load(_profile("bridged")), "bridged")
    assert info.status == "refused" and "host bridges run_skill: a bridge is" in info.diagnostics[-1].message
    policy = GRANTED + "\n@hookimpl\ndef reyn_before_tool_call(call):\n    return None\n"
    install_package_plugin(site, "policy", {"__init__.py": policy, "reyn_permissions.toml": declaration()})
    info = _info(_load(_profile("policy")), "policy")
    assert info.status == "refused"
    assert (
        "reyn_before_tool_call: its policy hooks judge every call of every plugin"
        in info.diagnostics[-1].message
    )
    # the same plugin loads in process (the positive control)
    assert _info(_load(_profile("policy", isolation="in-process")), "policy").status == "loaded"
    # any hook whose answer the host needs and a worker does not send — an agent's tool list here,
    # which would otherwise leave that agent unnarrowed — refuses isolation too
    agents = GRANTED + "\n@hookimpl\ndef reyn_agent_tools(settings):\n    return {'scout': ['echo']}\n"
    install_package_plugin(site, "agents", {"__init__.py": agents, "reyn_permissions.toml": declaration()})
    info = _info(_load(_profile("agents")), "agents")
    assert info.status == "refused"
    assert "reyn_agent_tools: the host needs this hook's answer" in info.diagnostics[-1].message
    assert _info(_load(_profile("agents", isolation="in-process")), "agents").status == "loaded"


def test_an_isolated_plugin_loads_without_its_cli_commands(site: Path) -> None:
    commands = GRANTED + "\n@hookimpl\ndef reyn_cli_commands():\n    return {'x': lambda argv, loaded: 0}\n"
    install_package_plugin(
        site,
        "commander",
        {"__init__.py": commands, "reyn_permissions.toml": declaration()},
        commands=("x",),
    )
    isolated = _load(_profile("commander"))
    assert _info(isolated, "commander").status == "loaded" and isolated.commands == {}
    assert "RJ010" in _codes(isolated)
    assert "x" in _load(_profile("commander", isolation="in-process")).commands


def test_an_external_tool_without_a_network_grant_is_not_registered(site: Path) -> None:
    source = GRANTED.replace('@tool(purity="read_only")\ndef env', '@tool(purity="external")\ndef env')
    install_package_plugin(
        site, "outward", {"__init__.py": source, "reyn_permissions.toml": declaration(network=True)}
    )
    result = _load(_profile("outward"))
    assert "env" not in result.registry and "read" in result.registry
    assert [d.tool for d in _info(result, "outward").diagnostics if d.code == "RJ007"] == ["env"]
    granted = _load(_profile("outward", "network = true"))
    assert "env" in granted.registry


def test_grants_without_isolation_warn_that_they_are_not_enforced(site: Path) -> None:
    install_package_plugin(
        site, "plain", {"__init__.py": GRANTED, "reyn_permissions.toml": declaration(network=True)}
    )
    result = _load(_profile("plain", "network = true", isolation="in-process"))
    assert _codes(result) == ["RJ006"]


def test_plugins_show_and_list_json_show_declared_and_granted(site: Path, tmp_path: Path) -> None:
    install_package_plugin(
        site, "shown", {"__init__.py": GRANTED, "reyn_permissions.toml": declaration(filesystem_read=True)}
    )
    profile = tmp_path / "reyn.toml"
    profile.write_text(_profile("shown", f'read = ["{tmp_path}"]'))
    env = {**os.environ, "PYTHONPATH": str(site)}
    reyn = [sys.executable, "-m", "reyn_core", "--profile-file", str(profile)]
    listed = subprocess.run(
        [*reyn, "plugins", "list", "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    [entry] = [p for p in json.loads(listed.stdout)["plugins"] if p["id"] == "shown"]
    assert entry["permissions"]["declared"]["filesystem_read"] is True
    assert entry["permissions"]["granted"]["filesystem_read"] == [str(tmp_path.resolve())]
    assert entry["permissions"]["isolation"] == "process"
    shown = subprocess.run(
        [*reyn, "plugins", "show", "shown"], capture_output=True, text=True, env=env, timeout=120
    )
    assert "permissions   isolated (sandboxed worker)" in shown.stdout, shown.stdout + shown.stderr
    assert f"filesystem_read   true       {tmp_path.resolve()}" in shown.stdout
    doctor = subprocess.run([*reyn, "doctor"], capture_output=True, text=True, env=env, timeout=120)
    assert "RJ008" in doctor.stdout and "runs isolated" in doctor.stdout, doctor.stdout + doctor.stderr


def test_without_a_kernel_sandbox_an_isolated_plugin_is_refused_never_run_in_process(
    site: Path, tmp_path: Path
) -> None:
    install_package_plugin(site, "boxed", {"__init__.py": GRANTED, "reyn_permissions.toml": declaration()})
    profile = tmp_path / "reyn.toml"
    profile.write_text(_profile("boxed"))
    reyn = [sys.executable, "-m", "reyn_core", "--profile-file", str(profile), "plugins", "list", "--json"]
    for pretend, status in (("landlock", "refused"), ("", "loaded")):  # the second run: the positive control
        env = {**os.environ, "PYTHONPATH": str(site), "REYN_SANDBOX_PRETEND_MISSING": pretend}
        listed = subprocess.run(reyn, capture_output=True, text=True, env=env, timeout=120)
        [entry] = [p for p in json.loads(listed.stdout)["plugins"] if p["id"] == "boxed"]
        assert entry["status"] == status, entry
        if pretend:
            assert [d["code"] for d in entry["diagnostics"] if d["severity"] == "error"] == ["RJ004"]
