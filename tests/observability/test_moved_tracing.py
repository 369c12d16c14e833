"""Tracing left reyn-core for reyn-otel (issue 24) with no re-export: the old modules and the host's
``configure_tracing``, imported from their old place, are an ``ImportError`` naming reyn-otel and the
new path; the new paths import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from moved_imports import moved_import_error

from reyn_core.moved import MOVED

MOVES = {old: move for old, move in MOVED.items() if move[1][0] == "reyn-otel"}


def test_the_tracing_modules_are_in_the_table_and_import_from_their_new_home():
    assert set(MOVES) == {
        "reyn_core.tracing",
        "reyn_core.loading.load_spans",
        "reyn_core.isolation.worker_spans",
        "reyn_core.host.configure_tracing",
    }
    for old, (new, _) in MOVES.items():
        module, _, attr = new.rpartition(".") if old.startswith("reyn_core.host.") else (new, "", "")
        imported = importlib.import_module(module)  # positive control: the new place works
        assert not attr or callable(getattr(imported, attr))


@pytest.mark.parametrize(
    ("statement", "new"),
    [
        ("from reyn_core.tracing import configure_tracing", "moved to reyn_otel in the reyn-otel"),
        ("from reyn_core.host import configure_tracing", "to reyn_otel.configure_tracing in the reyn-otel"),
        ("import reyn_core.loading.load_spans", "moved to reyn_otel.load_spans in the reyn-otel"),
        ("import reyn_core.isolation.worker_spans", "moved to reyn_otel.worker_spans in the reyn-otel"),
    ],
)
def test_an_old_import_is_a_clear_error_naming_the_distribution(statement, new):
    assert new in moved_import_error(statement)


def test_what_stayed_in_the_host_api_still_imports():
    # positive control for the host's __getattr__: its exports, and an unknown name's AttributeError
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from reyn_core.host import active_tracer, tool_call_id, observe_with\n"
            "import reyn_core.host as h\n"
            "try:\n    h.NoSuchName\nexcept AttributeError as exc:\n    print('attr', exc)\n",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "attr module 'reyn_core.host' has no attribute 'NoSuchName'" in proc.stdout
