"""Names that left ``reyn_core.gates`` for ``reyn_core.operator_policy`` (issue 24) give the clear
moved message wherever they are looked up — ``from reyn_core.gates import X`` an ``ImportError``,
attribute access an ``AttributeError`` (``hasattr`` False) — and none of them still works there as an
accidental re-export. ``_in_from_import`` sees a ``from`` import whose name index needs an
``EXTENDED_ARG`` prefix (over 255 names: Python 3.10 leaves ``f_lasti`` at the prefix), checked on
every Python 3.10+ this machine has. Controls: the new home imports; gates' own names still do."""

from __future__ import annotations

import glob
import re
import subprocess
import sys
from pathlib import Path

import pytest

import reyn_core.gates as gates
from reyn_core import operator_policy

MOVED_NAMES = ("OperatorPolicy", "PluginPolicy", "NO_POLICY")
MOVED_PY = Path(__file__).resolve().parents[2] / "reyn_core" / "moved.py"


@pytest.mark.parametrize("name", MOVED_NAMES)
def test_a_moved_gate_name_says_where_it_went(name: str) -> None:
    new = f"reyn_core.operator_policy.{name} (still in reyn-core)"
    with pytest.raises(ImportError, match=re.escape(f"reyn_core.gates.{name} is now {new}")):
        exec(f"from reyn_core.gates import {name}", {"__name__": "caller"})
    assert not hasattr(gates, name)
    with pytest.raises(AttributeError, match=r"is now reyn_core\.operator_policy"):
        getattr(gates, name)
    # control: the new home
    assert getattr(operator_policy, name) is not None


def test_control_gates_own_names_import() -> None:
    namespace: dict[str, object] = {"__name__": "caller"}
    exec("from reyn_core.gates import check, Decision, op_matches, available, failed_check", namespace)
    assert namespace["check"] is gates.check


SCRIPT = """
import importlib.util, sys, types
spec = importlib.util.spec_from_file_location("reyn_core_moved_probe", sys.argv[1])
moved = importlib.util.module_from_spec(spec); spec.loader.exec_module(moved)
moved.MOVED["fakemod.Old"] = ("newpkg.Old", ("newdist", "pip install newdist"))
fake = types.ModuleType("fakemod"); fake.__getattr__ = moved.moved_attributes("fakemod")
sys.modules["fakemod"] = fake
many = "\\n".join(f"v{i} = {i}" for i in range(300))  # the imported name's index is over 255
for source in (many + "\\nfrom fakemod import Old", "from fakemod import Old"):
    try:
        exec(source, {"__name__": "__main__"})
    except ImportError as exc:
        assert "moved to newpkg.Old" in str(exc), str(exc)
    else:
        raise AssertionError("imported")
print("ok")
"""


def _pythons() -> list[str]:
    found = {sys.executable}
    for path in glob.glob("/root/.pyenv/versions/3.1[0-9]*/bin/python"):
        found.add(path)
    return sorted(found)


@pytest.mark.parametrize("python", _pythons())
def test_a_from_import_with_an_extended_name_index_gets_the_moved_message(python: str) -> None:
    proc = subprocess.run(
        [python, "-I", "-c", SCRIPT, str(MOVED_PY)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
