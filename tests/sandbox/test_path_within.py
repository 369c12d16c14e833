"""``reyn_sandbox.path_within``: the one path-containment predicate of the sandbox and reyn-isolation
(the core, which may not import the sandbox, keeps its own: docs/decisions.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reyn_sandbox import path_within

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("path", "root", "inside", "strictly"),
    [
        ("/w", "/w", True, False),
        ("/w/a", "/w", True, True),
        ("/w/a/b", "/w/", True, True),
        ("/w-old", "/w", False, False),  # a sibling sharing the prefix is not inside
        ("/wa", "/w", False, False),
        ("/", "/w", False, False),
        ("/w", "/w/a", False, False),  # a folder does not lie inside what it holds
        ("/anything", "/", True, True),
        ("/", "/", True, False),
    ],
)
def test_path_within(path: str, root: str, inside: bool, strictly: bool) -> None:
    assert path_within(path, root) is inside
    assert path_within(path, root, strict=True) is strictly


# The predicate's text, as the three copies wrote it before (issue 24): a prefix test with the separator.
WRITTEN_AGAIN = re.compile(r"startswith\([^)]*\.rstrip\((os\.sep|\"/\")\) \+ (os\.sep|\"/\")\)")


def test_the_sandbox_and_isolation_write_it_once() -> None:
    found = {
        str(p.relative_to(REPO)): len(WRITTEN_AGAIN.findall(p.read_text(encoding="utf-8")))
        for package in ("reyn_sandbox", "reyn_isolation")
        for p in sorted((REPO / package).rglob("*.py"))
    }
    assert found["reyn_sandbox/_paths.py"] == 1  # positive control: the pattern finds the definition
    assert {path: n for path, n in found.items() if n and path != "reyn_sandbox/_paths.py"} == {}
