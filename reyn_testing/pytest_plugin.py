"""pytest plugin of the Reyn testing kit (entry point ``pytest11: reyn``).

Loaded by pytest in every project where reyn-core is installed, so it imports nothing beyond
pytest at import time; each fixture imports what it needs when used. Fixtures:

``reyn_load``            factory: ``reyn_load(profile, host_tools=())`` -> ``LoadResult`` (real loader)
``reyn_plugin_id``       the plugin under test (override it, or set ini ``reyn_plugin``, or mark)
``reyn_plugin_settings`` its ``[plugins.<id>.settings]`` table for the tests (default ``{}``)
``reyn_plugin_profile``  a profile dict enabling only that plugin with those settings
``reyn_plugin_result``   ``LoadResult`` of that profile; fails the test unless the plugin loaded
``reyn_registry``        the frozen registry of ``reyn_plugin_result``
``reyn_call``            a ``ToolCaller`` over ``reyn_registry`` (workspace: ``tmp_path``)
``assert_diagnostic``    the ``reyn_testing.assert_diagnostic`` function

Marker ``@pytest.mark.reyn_plugin("id", settings={...})`` selects the plugin and settings for
one test or module. (The ``llm_replay`` fixture is reyn-loops' own pytest plugin,
``reyn_loops.testing.replay``.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from reyn_core.host import LoadResult, ToolRegistry
    from reyn_testing.tool_caller import ToolCaller

INI_PLUGIN = "reyn_plugin"
# Plugin id -> the distribution the kit loaded it from, for the end-of-session summary.
_LOADED = pytest.StashKey[dict[str, str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(INI_PLUGIN, "id of the Reyn plugin under test (fixture reyn_plugin_id)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reyn_plugin(plugin_id, settings=None): the Reyn plugin (and its settings) a test loads "
        "through the reyn_plugin_* fixtures",
    )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Name the distribution each plugin under test was loaded from: an editable checkout or a
    stale copy in site-packages are told apart at a glance."""
    loaded = config.stash.get(_LOADED, {})
    for plugin_id, origin in sorted(loaded.items()):
        terminalreporter.write_line(f"reyn: plugin {plugin_id!r} under test loaded from {origin}")


def _marker(request: pytest.FixtureRequest) -> pytest.Mark | None:
    return request.node.get_closest_marker("reyn_plugin")


@pytest.fixture
def reyn_load() -> Callable[..., LoadResult]:
    """Factory running the real loader: ``reyn_load(profile, *, host_tools=(), profile_name=None)``.

    ``profile`` is TOML text, a dict of the same structure, a path to a profile file, a
    ``Profile``, or None (nothing enabled). Returns a ``LoadResult`` (registry, report, profile).
    """
    from reyn_testing.profiles import load_with_profile

    return load_with_profile


@pytest.fixture
def reyn_plugin_id(request: pytest.FixtureRequest) -> str:
    """The id of the plugin under test: the ``reyn_plugin`` marker, else the ``reyn_plugin`` ini
    option. Plugin test suites usually override this fixture in their ``conftest.py``."""
    mark = _marker(request)
    if mark is not None and mark.args:
        return str(mark.args[0])
    value = str(request.config.getini(INI_PLUGIN) or "")
    if not value:
        pytest.fail(
            "no Reyn plugin under test: define a `reyn_plugin_id` fixture in conftest.py, set "
            '`reyn_plugin = "<id>"` in [tool.pytest.ini_options], or mark the test '
            '@pytest.mark.reyn_plugin("<id>")',
            pytrace=False,
        )
    return value


@pytest.fixture
def reyn_plugin_settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The plugin's settings table for these tests: the marker's ``settings=`` or ``{}``."""
    mark = _marker(request)
    if mark is not None and mark.kwargs.get("settings") is not None:
        return dict(mark.kwargs["settings"])
    return {}


@pytest.fixture
def reyn_plugin_profile(reyn_plugin_id: str, reyn_plugin_settings: dict[str, Any]) -> dict[str, Any]:
    """A profile dict enabling only the plugin under test, with ``reyn_plugin_settings``."""
    from reyn_testing.profiles import plugin_profile

    return plugin_profile(reyn_plugin_id, reyn_plugin_settings or None)


@pytest.fixture
def reyn_plugin_result(
    request: pytest.FixtureRequest, reyn_plugin_id: str, reyn_plugin_profile: dict[str, Any]
) -> LoadResult:
    """``LoadResult`` of ``reyn_plugin_profile`` through the real loader (the installed plugin).

    Fails the test, listing the diagnostics, unless the plugin's status is ``loaded``. The
    distribution it was loaded from is named in the failure, in the test's report section ``reyn``
    and in the session summary.
    """
    from reyn_testing.assert_diagnostics import _describe, not_installed_hint, origin_line
    from reyn_testing.profiles import load_with_profile

    result = load_with_profile(reyn_plugin_profile)
    info = result.report.plugin(reyn_plugin_id)
    origin = origin_line(info)
    if info is None or info.status != "loaded":
        if info is None or not info.distribution:
            status = f"not installed; {not_installed_hint()}"
        else:
            status = f"{info.status} (from {origin})"
        pytest.fail(
            f"Reyn plugin {reyn_plugin_id!r} did not load: {status}\n{_describe(result.report.diagnostics)}",
            pytrace=False,
        )
    request.config.stash.setdefault(_LOADED, {})[reyn_plugin_id] = origin
    request.node.add_report_section("setup", "reyn", f"plugin {reyn_plugin_id!r} loaded from {origin}")
    return result


@pytest.fixture
def reyn_registry(reyn_plugin_result: LoadResult) -> ToolRegistry:
    """The frozen registry holding the plugin under test (and nothing else)."""
    return reyn_plugin_result.registry


@pytest.fixture
def reyn_call(reyn_registry: ToolRegistry, tmp_path: Any) -> ToolCaller:
    """A ``ToolCaller`` over ``reyn_registry``: ``reyn_call.router(name, args)``,
    ``reyn_call.phase(name, args, allowed_ops=...)``, ``reyn_call.router_tools()``,
    ``reyn_call.phase_ops(allowed_ops)``; its context's workspace is ``tmp_path``."""
    from reyn_testing.tool_caller import ToolCaller

    return ToolCaller(reyn_registry, workspace=tmp_path)


@pytest.fixture
def assert_diagnostic() -> Callable[..., Any]:
    """``assert_diagnostic(result, code, *, plugin=None, tool=None, severity=None,
    message_contains=None)`` -> the matching diagnostic, or an AssertionError listing all."""
    from reyn_testing.assert_diagnostics import assert_diagnostic as check

    return check
