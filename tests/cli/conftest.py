"""Shared by the CLI suites that build their own plugin wheels (``DISTS`` in the test module)."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_distkit import venv_reyn


@pytest.fixture(scope="module")
def cli(
    request: pytest.FixtureRequest, make_module_venv: Any, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """``reyn`` (``plugin_distkit.VenvReyn``) in a fresh venv holding reyn-core and a wheel of each
    of the test module's ``DISTS``; the venv is named after the module."""
    name = request.module.__name__.rpartition(".")[2]
    return venv_reyn(make_module_venv, tmp_path_factory, name, request.module.DISTS)
