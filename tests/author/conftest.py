"""Fixtures for the author-experience tests: small plugin modules built in memory."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def plugin_module() -> Callable[..., types.ModuleType]:
    """Factory: ``plugin_module(source, name=...)`` executes plugin source text as a module object."""
    counter = iter(range(10_000))

    def build(source: str, name: str | None = None) -> types.ModuleType:
        module = types.ModuleType(name or f"reyn_test_plugin_{next(counter)}")
        namespace: dict[str, Any] = module.__dict__
        exec(compile(source, f"<{module.__name__}>", "exec"), namespace)
        return module

    return build


@pytest.fixture(scope="session")
def example_installed() -> None:
    """Skip unless the example plugin is installed in this environment (``make test`` installs it)."""
    from importlib.metadata import entry_points

    if not any(ep.name == "example" for ep in entry_points(group="reyn.plugins")):
        pytest.skip("reyn-plugin-example is not installed here: pip install -e ./reyn_plugin_example")
