"""``reyn_core.moved``: every old dotted name's entry names where that name is now, and the error of
a moved module names, besides the module's own new home, each of its names that went somewhere else
— another distribution, or another path inside reyn-core (``reyn_core.tracing.redact`` is
``reyn_core.host.redact``, not in reyn-otel)."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from moved_imports import error_line

from reyn_core.moved import MOVED


def resolve(dotted: str) -> Any:
    """The module or attribute ``dotted`` names (raises when there is none)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_entry_names_a_home_that_exists(old: str) -> None:
    new, _ = MOVED[old]
    assert resolve(new) is not None


def error_of(statement: str) -> str:
    last = error_line(statement)
    assert last.startswith("ImportError: "), last
    return last


@pytest.mark.parametrize(
    ("statement", "name", "home"),
    [
        ("from reyn_core.tracing import redact", "reyn_core.tracing.redact", "reyn_core.host.redact"),
        (
            "import reyn_core.isolation.permissions",
            "reyn_core.isolation.permissions",
            "reyn_core.loading.permissions",
        ),
    ],
)
def test_a_name_that_stayed_in_the_core_is_named_at_its_core_path(
    statement: str, name: str, home: str
) -> None:
    message = error_of(statement)
    assert f"{name} is now {home} (still in reyn-core)" in message
    assert f"{name} moved to" not in message  # never sent to the distribution the module went to
    assert resolve(home) is not None  # positive control: the named home imports


def test_the_module_itself_still_names_its_distribution() -> None:
    message = error_of("from reyn_core.tracing import configure_tracing")
    assert (
        "reyn_core.tracing is no longer part of reyn-core: it moved to reyn_otel in the reyn-otel" in message
    )
