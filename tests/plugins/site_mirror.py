"""The test venv's site-packages as another folder, one distribution left out: a fresh interpreter
(``python -S``, then ``site.addsitedir(mirror)``: ``run_over``) sees everything installed but that
distribution, as on a host that never installed it (the other distributions are links, nothing is
copied)."""

from __future__ import annotations

import json
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


def run_over(mirror: Path, first: Path, script: str, *args: str, **options: Any) -> dict[str, Any]:
    """Run ``script`` (Python source) in a fresh interpreter that sees the packages of ``mirror`` and,
    ahead of them, the folder ``first``, with ``args`` as ``sys.argv[1:]``; the JSON object it printed
    last. ``options``: more ``subprocess.run`` options (``env``, ``cwd``); a failure raises."""
    paths = f"import site, sys\nsite.addsitedir({str(mirror)!r})\nsys.path.insert(0, {str(first)!r})\n"
    done = subprocess.run(
        [sys.executable, "-S", "-c", paths + script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        **options,
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found
