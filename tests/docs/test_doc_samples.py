"""Every ```python block in docs/ and in the READMEs runs, and the site builds with ``mkdocs build --strict``.

Each page's python blocks run in order in one namespace (a fresh module), with the working
directory a temporary folder, so a page reads like a session a user can follow. Blocks that are
not meant to run are written as ```text (or another language) instead.

A page whose blocks define pytest tests (``def test_...``) is also written out as one test module
(each block at its page line) and run with pytest in a subprocess: its tests must all pass, so a
test shown in the docs is a test that runs.
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

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
READMES = (ROOT / "README.md", ROOT / "reyn_plugin_example" / "README.md")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
TEST_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(test_\w+)", re.M)


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


def doc_sources() -> list[Path]:
    """Every Markdown page whose samples are checked: docs/ and the READMEs."""
    return [*sorted(DOCS.rglob("*.md")), *(p for p in READMES if p.exists())]


def page_id(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


PAGES = [p for p in doc_sources() if samples(p)]
TEST_PAGES = [p for p in PAGES if any(TEST_DEF.search(s.code) for s in samples(p))]


def test_the_readmes_are_among_the_checked_pages():
    assert ROOT / "README.md" in PAGES
    assert {page_id(p) for p in doc_sources()} >= {
        "README.md",
        "reyn_plugin_example/README.md",
        "docs/index.md",
    }


def test_pages_that_show_tests_are_run_with_pytest():
    ids = {page_id(p) for p in TEST_PAGES}
    assert {"docs/testing-plugins.md", "docs/surfaces.md"} <= ids


def test_the_sample_extractor_finds_blocks_and_their_lines(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "# T\n\n```python\nx = 1\n```\n\n- item\n\n"
        "    ```python\n    y = x + 1\n    ```\n\n```text\nno\n```\n"
    )
    assert samples(page) == [Sample("x = 1\n", 4), Sample("y = x + 1\n", 10)]


@pytest.mark.parametrize("page", PAGES, ids=[page_id(p) for p in PAGES])
def test_doc_page_samples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rel = page_id(page)
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
        code = compile("\n" * (sample.line - 1) + sample.code, rel, "exec")
        try:
            exec(code, module.__dict__)
        except Exception as exc:  # report which block of which page broke
            detail = "".join(traceback.format_exception(exc)[-6:])
            pytest.fail(f"{rel}: python block {index} (line {sample.line}) failed:\n{detail}", pytrace=False)


def page_module(page: Path) -> str:
    """The page's python blocks as one module, each block at its page line (tracebacks match the page)."""
    lines: list[str] = []
    for sample in samples(page):
        lines += [""] * (sample.line - 1 - len(lines))
        lines += sample.code.splitlines()
    return "\n".join(lines) + "\n"


def test_page_module_keeps_page_lines(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "# T\n\n```python\nx = 1\n```\n\ntext\n\n```python\ndef test_x():\n    assert x == 1\n```\n"
    )
    assert page_module(page).splitlines()[3] == "x = 1"
    assert page_module(page).splitlines()[9] == "def test_x():"


@pytest.mark.parametrize("page", TEST_PAGES, ids=[page_id(p) for p in TEST_PAGES])
def test_tests_shown_in_a_page_pass_under_pytest(page: Path, tmp_path: Path, child_pytest) -> None:
    names = [name for s in samples(page) for name in TEST_DEF.findall(s.code)]
    module = tmp_path / f"test_doc_{re.sub(r'[^0-9a-zA-Z]', '_', page.stem)}.py"
    module.write_text(page_module(page), encoding="utf-8")
    proc = child_pytest("-W", "ignore::UserWarning", "-rA", module.name, cwd=tmp_path, timeout=600)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{page_id(page)}: its tests failed under pytest:\n{report[-4000:]}"
    assert f"{len(names)} passed" in proc.stdout, report[-4000:]
    for name in names:
        assert f"PASSED {module.name}::{name}" in proc.stdout, f"{name} did not run:\n{report[-4000:]}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (dev extra)")
    # No --quiet: mkdocs then stops counting warnings and --strict lets broken links through.
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=DOCS.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
