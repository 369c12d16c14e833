"""Every ```python block in docs/ runs, and the site builds with ``mkdocs build --strict``.

Each page's python blocks run in order in one namespace (a fresh module), with the working
directory a temporary folder, so a page reads like a session a user can follow. Blocks that are
not meant to run are written as ```text (or another language) instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Sample:
    """One python block: its source and the line of the page where it starts."""

    code: str
    line: int


def samples(page: Path) -> list[Sample]:
    """The ```python blocks of ``page``, in order (indented blocks in lists are dedented)."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start("body")) + 1
        found.append(Sample(textwrap.dedent(match.group("body")), line))
    return found


PAGES = sorted(p for p in DOCS.rglob("*.md") if samples(p))


def test_the_sample_extractor_finds_blocks_and_their_lines(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# T\n\n```python\nx = 1\n```\n\n- item\n\n    ```python\n    y = x + 1\n    ```\n\n```text\nno\n```\n")
    assert samples(page) == [Sample("x = 1\n", 4), Sample("y = x + 1\n", 10)]


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_doc_page_samples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = page.relative_to(DOCS).as_posix()
    module = types.ModuleType(f"doc_sample_{re.sub(r'[^0-9a-zA-Z]', '_', rel)}")
    module.__file__ = str(tmp_path / "sample.py")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # samples may write a module and import it
    for env in [k for k in os.environ if k.startswith("REYN_")]:
        monkeypatch.delenv(env)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for index, sample in enumerate(samples(page), start=1):
        # Pad so tracebacks give the page's own line numbers.
        code = compile("\n" * (sample.line - 1) + sample.code, f"docs/{rel}", "exec")
        try:
            exec(code, module.__dict__)
        except Exception as exc:  # report which block of which page broke
            detail = "".join(traceback.format_exception(exc)[-6:])
            pytest.fail(f"docs/{rel}: python block {index} (line {sample.line}) failed:\n{detail}",
                        pytrace=False)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (dev extra)")
    # No --quiet: mkdocs then stops counting warnings and --strict lets broken links through.
    proc = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=DOCS.parent, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
