"""The test venv's site-packages as another folder, one distribution left out: a fresh interpreter
(``python -S``, then ``site.addsitedir(mirror)``) sees everything installed but that distribution, as
on a host that never installed it (the other distributions are links, nothing is copied).
``child_json`` runs such an interpreter and reads the JSON it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any


def site_without(folder: Path, import_name: str) -> Path:
    """``folder``/mirror: links to every entry of site-packages except ``import_name``'s package,
    dist-info and editable-install hooks."""
    mirror = folder / "mirror"
    mirror.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if import_name not in entry.name:
            (mirror / entry.name).symlink_to(entry)
    return mirror


def child_json(
    code: str, *argv: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter without the site folder (``python -S -c code argv...``:
    the code adds the folders it wants; ``env``: more environment variables) and return the JSON
    object its last line of output prints."""
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found
