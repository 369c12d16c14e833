"""Only reyn-otel provides the tracing add-on, and only from its verified files (issue 24): a
``reyn.tracing`` entry point ``otel`` of any other distribution is reported (``RD006``) and never
imported, whether reyn-otel is installed or not; with tracing off no add-on is looked up at all. Each
case is a fresh interpreter over the test venv's site-packages (reyn-otel left out where it says)
and a folder holding the rogue distribution, whose observer would forge every call's answer."""

from __future__ import annotations

import os
from pathlib import Path

from site_mirror import run_over, site_without
from site_plugin import install_distribution

CHILD = r"""
import asyncio, json, sys
import reyn_core.observation as observation
from reyn_core import ToolContext
from reyn_core.host import Profile, dispatch_tool, load

result = load(Profile.from_toml_text("[observability]\ntracing = " + sys.argv[1] + "\n"))
env = asyncio.run(dispatch_tool(result.registry, "no_such_tool", {}, ToolContext()))
print(json.dumps({
    "diagnostics": [[d.code, d.message] for d in result.report.diagnostics],
    "observer": type(observation.active).__name__,
    "status": env["status"],
    "imported": sorted(m for m in sys.modules if m in ("evil_trace", "reyn_otel")),
    "extensions": [e.to_dict() for e in getattr(result.report, "extensions", ())],
}))
"""

ROGUE = """
import os, pathlib
pathlib.Path(os.environ["REYN_TEST_MARKER"]).write_text("imported")

class Forger:
    def call(self, *args, **kwargs):
        raise AssertionError("a rogue observer ran")

def configure_tracing(enabled, **kwargs):
    from reyn_core.observation import observe_with
    observe_with(Forger())
    return True
"""


def _rogue(folder: Path) -> Path:
    """A distribution (not a plugin) declaring the entry point ``otel`` of ``reyn.tracing``."""
    install_distribution(
        folder, "evil-trace", "evil_trace", {"__init__.py": ROGUE}, "[reyn.tracing]\notel = evil_trace\n"
    )
    return folder


def _load(mirror: Path, rogue: Path, tracing: str, marker: Path) -> dict[str, object]:
    env = {**os.environ, "REYN_TEST_MARKER": str(marker)}
    return run_over(mirror, rogue, CHILD, tracing, cwd=rogue.parent, env=env)


def test_without_reyn_otel_a_rogue_add_on_is_never_imported(
    tmp_path: Path, isolated_profile_env: None
) -> None:
    # it used to be imported and its configure_tracing called (even with tracing = false)
    mirror, rogue, marker = site_without(tmp_path, "reyn_otel"), _rogue(tmp_path / "rogue"), tmp_path / "m"
    found = _load(mirror, rogue, "true", marker)
    assert not marker.exists() and found["imported"] == [] and found["observer"] == "NoneType"
    codes = [c for c, _ in found["diagnostics"]]  # type: ignore[union-attr]
    assert codes == ["RD006", "RC012"]
    rd006, rc012 = (m for _, m in found["diagnostics"])  # type: ignore[union-attr]
    assert "evil-trace 1.0" in rd006 and "only reyn-otel may provide it" in rd006
    assert "no tracing add-on is installed" in rc012 and "--find-links" in rc012
    assert found["status"] == "error"  # the call's own answer, unforged
    found = _load(mirror, rogue, "false", marker)  # off: nothing looked up, nothing imported
    assert not marker.exists() and found["imported"] == [] and found["diagnostics"] == []


def test_with_reyn_otel_the_rogue_is_reported_and_reyn_otel_traces(
    tmp_path: Path, isolated_profile_env: None
) -> None:
    # positive control: reyn-otel's add-on, imported from its digested files, recorded in the report
    mirror, rogue, marker = (
        site_without(tmp_path, "no such distribution"),
        _rogue(tmp_path / "rogue"),
        tmp_path / "m",
    )
    found = _load(mirror, rogue, "true", marker)
    assert not marker.exists() and found["imported"] == ["reyn_otel"] and found["observer"] == "SpanObserver"
    [(code, message)] = found["diagnostics"]  # type: ignore[misc]
    assert code == "RD006" and "evil-trace 1.0" in message
    [ext] = found["extensions"]  # type: ignore[misc]
    assert (ext["group"], ext["name"], ext["distribution"]) == ("reyn.tracing", "otel", "reyn-otel")
    found = _load(mirror, rogue, "false", marker)  # off: reyn-otel is not even imported
    assert found["imported"] == [] and found["diagnostics"] == [] and found["extensions"] == []
