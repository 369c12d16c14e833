"""The LLM runtime left reyn-core for reyn-loops (issue 24) with no re-export: each moved name, imported
from its old place, is an ``ImportError`` naming reyn-loops and the new path (every spelling:
tests/core/test_moved_table.py); the new path imports.
And ``reyn chat`` / ``reyn phase`` without the ``loops`` plugin say how to get them."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from reyn_core.moved import MOVED as EVERY_MOVE

# this distribution's moves (reyn-isolation's are tests/isolation/test_moved_out.py, the search
# pack's tests/packs/search/test_moved_names.py, reyn-testing's tests/author/testing_kit/test_moved_kit.py,
# reyn-otel's tests/observability/test_moved_tracing.py)
MOVED = {old: move for old, move in EVERY_MOVE.items() if move[1][0] == "reyn-loops"}
MOVED_MODULES = sorted(old for old, (new, _) in MOVED.items() if not old.startswith("reyn_core.errors."))
MOVED_ERRORS = sorted(old.rsplit(".", 1)[1] for old in MOVED if old.startswith("reyn_core.errors."))


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter (no module of this test session already imported)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_table_covers_what_left_and_each_new_place_imports():
    assert {"reyn_core.loops", "reyn_core.cli.chat", "reyn_core.cli.phase"} <= set(MOVED_MODULES)
    assert set(MOVED_ERRORS) == {"LLMCallError", "ReplayMissing", "ReplayFixtureError"}
    for old, (new, (distribution, _)) in MOVED.items():
        assert distribution == "reyn-loops"
        module, _, attr = new.rpartition(".") if old.startswith("reyn_core.errors.") else (new, "", "")
        imported = importlib.import_module(module)  # positive control: the new place works
        if attr:
            assert getattr(imported, attr).__name__ == attr


@pytest.mark.parametrize("old", [*MOVED_MODULES, "reyn_core.loops.router", "reyn_core.loops.llm"])
def test_importing_a_moved_module_names_its_new_home(old):
    proc = _fresh(
        f"import {old}\n"  # a fresh process: nothing of reyn_core imported before this line
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: "), proc.stderr
    # refused with the first moved module Python imports (a package before its submodules: the
    # test kit's reyn_core.testing before the scripted server inside it), which names this one too
    parts = old.split(".")
    moved = next(
        ".".join(parts[:end]) for end in range(2, len(parts) + 1) if ".".join(parts[:end]) in EVERY_MOVE
    )
    assert f"{moved} is no longer part of reyn-core: it moved to {EVERY_MOVE[moved][0]} " in last
    assert "reyn_loops" in last and "reyn-loops" in last and "--find-links" in last
    assert "ModuleNotFoundError" not in proc.stderr


def test_what_stayed_in_the_core_still_imports():
    # positive control for the finder and the errors' __getattr__: neighbours of moved names
    proc = _fresh(
        "from reyn_core.errors import ProfileError, PhaseOutputError, describe_exception\n"
        "from reyn_testing import ToolCaller\n"
        "from reyn_core.host import parse_phase_output, PhaseOutput, render_phase\n"
        "import reyn_core.cli.tools, reyn_testing.pytest_plugin\n"
        "import reyn_core.errors as e\n"
        "try:\n    e.NoSuchName\nexcept AttributeError as exc:\n    print('attr', exc)\n"
        "try:\n    import reyn_core.nosuchmodule\n"
        "except ModuleNotFoundError as exc:\n    print('mnf', exc.name)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "attr module 'reyn_core.errors' has no attribute 'NoSuchName'" in proc.stdout
    assert "mnf reyn_core.nosuchmodule" in proc.stdout


def test_the_llm_error_keeps_its_message_and_fields():
    from reyn_loops.errors import LLMCallError

    error = LLMCallError("rate limited", model="m", kind="RateLimitError", status_code=429)
    assert error.message == str(error) == "rate limited"
    assert (error.model, error.kind, error.status_code) == ("m", "RateLimitError", 429)


@pytest.mark.parametrize("command", ["chat", "phase"])
def test_a_runtime_command_without_the_loops_plugin_says_how_to_get_it(tmp_path, command, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    proc = reyn_cli(command, "--help", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    # reyn-loops is installed here: its metadata (reyn.commands) names the plugin and the step
    assert f"command {command!r} comes from plugin 'loops' (reyn-loops" in proc.stderr
    assert "`reyn plugins enable loops`" in proc.stderr
    # positive control: the same profile with the plugin enabled has the command
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["loops", "example"]\n')
    ok = reyn_cli(command, "--help", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert f"usage: reyn {command}" in ok.stdout


def test_a_json_given_before_a_plugin_command_reaches_it(tmp_path, reyn_cli):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["loops"]\n')
    (tmp_path / "p.toml").write_text('name = "p"\ntask = "t"\n')  # no model: refused before any call
    proc = reyn_cli("--json", "phase", "run", "p.toml", cwd=tmp_path)
    assert proc.returncode == 2
    error = json.loads(proc.stderr.strip().splitlines()[-1])["error"]
    assert "names no model" in error["message"]
