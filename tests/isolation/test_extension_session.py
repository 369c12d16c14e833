"""What a load looked up by entry point is that load's own (issue 24): the extensions it verified and
imported live in its ``LoadSession.extensions``, not in module globals, so two loads running at once
in one process (threads, a host loading two profiles) each report exactly their own extensions and
neither forgets the other's; and within one load an extension is verified once, however many
isolated plugins ask for it. Real loads, a real worker, real threads."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host

from .plugin_kit import install_package_plugin
from .test_extension_point import PLUGIN

GATES = '''
"""Where the test holds a load: a plugin's hook reports it reached its gate, then waits to be let go."""
import threading

_events = {}
_lock = threading.Lock()


def event(name):
    with _lock:
        return _events.setdefault(name, threading.Event())


def reached(plugin_id):
    event(plugin_id + ":in").set()
    if not event(plugin_id + ":go").wait(120):
        raise TimeoutError(plugin_id + " was never let go")
'''

GATED = """
from reyn_core import hookimpl

REYN_API = 1


@hookimpl
def reyn_register_tools(register, settings):
    import reyn_ext_gates

    reyn_ext_gates.reached(__name__.split("_")[2])
"""

# the isolation backend, then a plugin in process that holds the load
WITH_EXTENSION = '[plugins]\nenable = ["loud", "gatea"]\n\n[plugins.loud]\nisolation = "process"\n'
WITHOUT_EXTENSION = '[plugins]\nenable = ["gateb"]\n'  # no isolated plugin, no tracing: no extension


@pytest.fixture
def gates(site: Path) -> Any:
    (site / "reyn_ext_gates.py").write_text(GATES)
    install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    install_package_plugin(site, "gatea", {"__init__.py": GATED})
    install_package_plugin(site, "gateb", {"__init__.py": GATED})
    import reyn_ext_gates  # the same module the plugins' hooks import

    yield reyn_ext_gates
    for name in ("gatea", "gateb"):  # never leave a load waiting
        reyn_ext_gates.event(name + ":go").set()
    del sys.modules["reyn_ext_gates"]  # the next test's gates start closed


def _start(profile: str, results: dict[str, Any], key: str) -> threading.Thread:
    def run() -> None:
        results[key] = host.load(host.Profile.from_toml_text(profile))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _extensions(result: Any) -> list[tuple[str, str, str]]:
    return [(e.group, e.name, e.distribution) for e in result.report.extensions]


BACKEND = [("reyn.isolation", "process", "reyn-isolation")]


def test_a_load_that_starts_while_another_runs_does_not_reset_its_extensions(gates: Any) -> None:
    # the load with the backend looked it up, then waits; a second load starts and finishes (it
    # used to clear the module's record of the first load's extensions): each reports its own
    results: dict[str, Any] = {}
    first = _start(WITH_EXTENSION, results, "with")
    assert gates.event("gatea:in").wait(120)  # the backend was looked up, the load is held
    second = _start(WITHOUT_EXTENSION, results, "without")
    assert gates.event("gateb:in").wait(120)
    gates.event("gateb:go").set()
    second.join(120)
    gates.event("gatea:go").set()
    first.join(120)
    assert _extensions(results["with"]) == BACKEND
    assert results["with"].report.plugin("loud").status == "loaded"
    assert _extensions(results["without"]) == []


def test_a_load_that_ends_while_another_runs_reports_only_its_own_extensions(gates: Any) -> None:
    # the load without extensions starts first and is held while the other looks up the backend
    # (it used to report the other's backend as its own)
    results: dict[str, Any] = {}
    second = _start(WITHOUT_EXTENSION, results, "without")
    assert gates.event("gateb:in").wait(120)
    first = _start(WITH_EXTENSION, results, "with")
    assert gates.event("gatea:in").wait(120)  # the backend was looked up, that load is held too
    gates.event("gateb:go").set()
    second.join(120)
    gates.event("gatea:go").set()
    first.join(120)
    assert _extensions(results["without"]) == []
    assert _extensions(results["with"]) == BACKEND


def test_one_load_alone_reports_its_extension(gates: Any) -> None:
    # control: the same profile, loaded alone
    gates.event("gatea:go").set()
    result = host.load(host.Profile.from_toml_text(WITH_EXTENSION))
    assert _extensions(result) == BACKEND and result.report.plugin("loud").status == "loaded"


def test_the_backend_is_verified_once_per_load_not_per_isolated_plugin(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each isolated plugin asks for the backend; its files are hashed once, and again by the next load
    from reyn_core.loading.step3_provenance import record

    hashed: list[str] = []
    real = record.provenance_for

    def counting(dist: Any, **kw: Any) -> Any:
        hashed.append(kw["plugin_id"])
        return real(dist, **kw)

    monkeypatch.setattr(record, "provenance_for", counting)
    for pid in ("loud", "quiet"):
        install_package_plugin(site, pid, {"__init__.py": PLUGIN.replace("shout", f"shout_{pid}")})
    profile = host.Profile.from_toml_text(
        '[plugins]\nenable = ["loud", "quiet"]\n\n[plugins.loud]\nisolation = "process"\n\n'
        '[plugins.quiet]\nisolation = "process"\n'
    )
    for _ in range(2):
        result = host.load(profile)
        assert [result.report.plugin(p).status for p in ("loud", "quiet")] == ["loaded", "loaded"]
        assert _extensions(result) == BACKEND
    assert hashed.count("reyn.isolation:process") == 2  # once per load
