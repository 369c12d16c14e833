"""``unless_within``'s path comparison, one attack per test: paths are compared by components as the
file pack resolves them — never as string prefixes — and anything unresolvable is outside."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reyn_core.approvals import ApprovalRule, PathCondition
from reyn_core.approvals.paths import within

ROOTS = ("out/drafts",)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "out/drafts").mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize("path", ["out/drafts/a.md", "./out/drafts/a.md", "out//drafts/x/y.md", "out/drafts"])
def test_paths_inside_the_root_are_within(ws, path):
    assert within(path, ROOTS, ws)


def test_an_absolute_path_inside_the_root_is_within(ws):
    assert within(str(ws / "out/drafts/a.md"), ROOTS, ws)


@pytest.mark.parametrize(
    "path",
    [
        "out/drafts-evil/a.md",  # a string prefix, not a component prefix
        "out/draftsx",
        "out/drafts/../a.md",  # '..' is never inside (the file pack refuses it)
        "out/drafts/../../etc/passwd",
        "../ws/out/drafts/a.md",
        "out/a.md",
        "/etc/passwd",
        "out/drafts\x00/a.md",
        "",
    ],
)
def test_paths_outside_the_root_are_not_within(ws, path):
    assert not within(path, ROOTS, ws)


def test_a_workspace_reached_through_a_link_resolves_like_the_file_pack(ws, tmp_path_factory):
    link = tmp_path_factory.mktemp("links") / "ws-link"
    os.symlink(ws, link)
    assert within("out/drafts/a.md", ROOTS, link)
    assert within(str(ws / "out/drafts/a.md"), ROOTS, link)  # the real path, seen from the link


def test_a_root_that_is_a_link_is_resolved(ws):
    (ws / "real").mkdir()
    os.symlink(ws / "real", ws / "out/linked")
    assert within(str(ws / "real/a.md"), ("out/linked",), ws)
    assert not within("out/linked-x/a.md", ("out/linked",), ws)


@pytest.mark.parametrize("value", [42, None, {"path": "out/drafts/a"}, ["out/drafts/a", 3]])
def test_a_value_that_is_not_a_path_fails_closed(ws, value):
    condition = PathCondition(arguments=("path",), roots=ROOTS)
    assert not condition.all_within({"path": value}, ws)


def test_every_path_of_a_list_must_be_within(ws):
    condition = PathCondition(arguments=("paths",), roots=ROOTS)
    assert condition.all_within({"paths": ["out/drafts/a", "out/drafts/b"]}, ws)
    assert not condition.all_within({"paths": ["out/drafts/a", "out/b"]}, ws)


def test_a_rule_with_a_string_selector_is_refused():
    with pytest.raises(TypeError, match="list of names"):
        ApprovalRule(tools="write_file")  # type: ignore[arg-type]
