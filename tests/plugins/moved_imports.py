"""What an import of a name that left reyn-core meets (``reyn_core.moved``), for the tests of each
distribution that took names out of the core."""

from __future__ import annotations

import subprocess
import sys


def error_line(statement: str) -> str:
    """Run ``statement`` in a fresh interpreter (nothing of reyn_core imported before it), check that
    it fails, and return the last line of its error output."""
    proc = subprocess.run([sys.executable, "-c", statement], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def expected_error(statement: str) -> str:
    """The exception type an old name's ``statement`` meets: ``ImportError`` for an import statement,
    ``AttributeError`` (with the same message) for an attribute of a module that kept its other names,
    as ``hasattr`` expects (``reyn_core.moved.moved_attributes``)."""
    last = statement.rsplit(";", 1)[-1].strip()
    return "ImportError" if last.startswith(("import ", "from ")) else "AttributeError"


def moved_import_error(statement: str) -> str:
    """``error_line(statement)``, checked to be the moved-name error saying how to install the new
    home."""
    last = error_line(statement)
    assert last.startswith(f"{expected_error(statement)}: ") and "is no longer part of reyn-core" in last, (
        last
    )
    assert "--find-links" in last
    return last
