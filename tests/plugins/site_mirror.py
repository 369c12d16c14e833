"""The test venv's site-packages as another folder, one distribution left out: a fresh interpreter
(``python -S``, then ``site.addsitedir(mirror)``) sees everything installed but that distribution, as
on a host that never installed it (the other distributions are links, nothing is copied)."""

from __future__ import annotations

import sysconfig
from pathlib import Path


def site_without(folder: Path, import_name: str) -> Path:
    """``folder``/mirror: links to every entry of site-packages except ``import_name``'s package,
    dist-info and editable-install hooks."""
    mirror = folder / "mirror"
    mirror.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if import_name not in entry.name:
            (mirror / entry.name).symlink_to(entry)
    return mirror
