"""``reyn_core/loading`` shows the load order (issue 24): one sub-package per step, ``stepN_<what>``
numbered from 1 without gaps; every module docstring that names a load step names its own folder's
number; and no two modules of reyn_core share a name, whatever folder they are in."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "reyn_core"
LOADING = CORE / "loading"
STEP = re.compile(r"step(\d+)_[a-z_]+")


def test_the_step_folders_are_numbered_in_order():
    numbers = sorted(int(m.group(1)) for p in LOADING.iterdir() if (m := STEP.fullmatch(p.name)))
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 6
    for folder in LOADING.iterdir():
        if STEP.fullmatch(folder.name):
            assert (folder / "__init__.py").is_file(), folder


def test_every_step_number_in_a_docstring_is_its_folders():
    wrong = []
    for path in sorted(LOADING.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        folder = STEP.fullmatch(path.parent.name)
        for said in re.findall(r"[Ll]oad step (\d+)", text):
            if folder is None or said != folder.group(1):
                wrong.append(f"{path.relative_to(CORE)}: says step {said}")
    assert wrong == []


def test_module_names_are_unique_across_folders():
    names = Counter(p.name for p in CORE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert sorted(n for n, count in names.items() if count > 1) == []
