"""Tracing left reyn-core for reyn-otel (issue 24) with no re-export: the old modules and the host's
``configure_tracing``, imported from their old place, are an ``ImportError`` naming reyn-otel and the
new path (every spelling: tests/core/test_moved_table.py); the new paths import."""

from __future__ import annotations

import importlib
import subprocess
import sys

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
