"""Shared by every pack's tests: a pack installed ALONE into a fresh venv, driven through `reyn`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass
class InstalledPack:
    """reyn-core plus one pack in a fresh venv, and the `reyn` commands the install tests use."""

    venv: Any

    def json(self, *args: str, cwd: Path) -> Any:
        """Run ``reyn ARGS`` in ``cwd``; it must succeed; return its JSON output."""
        proc = self.venv.run("reyn", *args, cwd=cwd)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)

    def plugins(self, cwd: Path) -> dict[str, dict[str, Any]]:
        """``reyn plugins list --json`` by plugin id."""
        return {p["id"]: p for p in self.json("plugins", "list", "--json", cwd=cwd)["plugins"]}

    def router(self, cwd: Path) -> list[str]:
        """The tool names ``reyn tools render --surface router`` offers."""
        return [
            t["function"]["name"]
            for t in self.json("tools", "render", "--surface", "router", "--json", cwd=cwd)
        ]

    def phase(self, cwd: Path, *ops: str) -> list[str]:
        """The op kinds ``reyn tools render --surface phase`` offers (``ops`` as ``--allowed-ops``)."""
        extra = ["--allowed-ops", *ops] if ops else []
        return [
            op["kind"]
            for op in self.json("tools", "render", "--surface", "phase", "--json", *extra, cwd=cwd)["ops"]
        ]

    def reyn_distributions(self) -> list[str]:
        """Names of the installed distributions that start with ``reyn-``."""
        proc = self.venv.run(
            "python",
            "-c",
            "import json, importlib.metadata as m; "
            "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))",
        )
        assert proc.returncode == 0, proc.stderr
        return [n for n in json.loads(proc.stdout) if n.startswith("reyn-")]

    def importable(self, *modules: str) -> list[bool]:
        """Whether each of ``modules`` can be imported in the venv (``importlib.util.find_spec``)."""
        code = "import sys, importlib.util as u; print([bool(u.find_spec(m)) for m in sys.argv[1:]])"
        proc = self.venv.run("python", "-c", code, *modules)
        assert proc.returncode == 0, proc.stderr
        return [word == "True" for word in proc.stdout.strip("[]\n").split(", ")]

    def assert_discovered_but_silent(self, cwd: Path, plugin_id: str) -> dict[str, Any]:
        """Without a profile enabling it, the pack's plugin is discovered, not enabled, contributes
        no tool, and the router offers nothing; its ``reyn plugins list`` entry."""
        entry = self.plugins(cwd)[plugin_id]
        assert (entry["status"], entry["enabled"], entry["tools"]) == ("discovered", False, [])
        assert self.router(cwd) == []
        return entry

    def assert_settings_typo_fails(self, cwd: Path, plugin_id: str, line: str, table: str = "") -> None:
        """A profile enabling the plugin whose ``[plugins.<id>.settings<table>]`` holds ``line``, an
        unknown key: the plugin fails at load, contributes no tool, and its first diagnostic names
        the key."""
        settings = f"[plugins.{plugin_id}.settings{table}]\n{line}\n"
        (cwd / "reyn.toml").write_text(f'[plugins]\nenable = ["{plugin_id}"]\n' + settings)
        key = line.split("=")[0].strip()
        entry = self.plugins(cwd)[plugin_id]
        assert entry["status"] == "failed" and entry["tools"] == []
        assert key in entry["diagnostics"][0]["message"]


@pytest.fixture(scope="module")
def pack(install_pack: Callable[[str], InstalledPack], request: pytest.FixtureRequest) -> InstalledPack:
    """The pack the test module names in ``PACK`` (``"file"``), installed alone in a fresh venv."""
    return install_pack(request.module.PACK)


@pytest.fixture(scope="module")
def install_pack(make_module_venv: Callable[..., Any]) -> Callable[[str], InstalledPack]:
    """``install_pack("file")``: reyn-core and ``reyn_builtin_tools/file`` alone in a fresh venv."""

    def install(pack: str) -> InstalledPack:
        venv = make_module_venv(f"{pack}-pack")
        venv.install("reyn-core", f"reyn_builtin_tools/{pack}")
        return InstalledPack(venv)

    return install
