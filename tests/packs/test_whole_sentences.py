"""The model reads whole sentences: every tool of every pack, rendered on the router and the phase
surface, carries descriptions whose paragraphs are unwrapped and whose summaries end at a sentence
or paragraph boundary — never a docstring's hard wrap, never a cut mid-sentence."""

from __future__ import annotations

import json
import re

import pytest

from reyn_core import ToolContext
from reyn_core.host import phase_context, render_phase, render_router
from reyn_core.tool import description_from_docstring, summary_line
from reyn_testing import load_with_profile

PACKS = ("file", "web", "memory", "catalog", "mcp", "shell", "source", "example")


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ws")
    (ws / "out").mkdir()
    profile = f"""
[plugins]
enable = {json.dumps(list(PACKS))}
[plugins.file.settings]
workspace = {json.dumps(str(ws))}
write_roots = ["out"]
[plugins.memory.settings]
path = {json.dumps(str(ws / "memory.db"))}
[plugins.shell.settings]
workspace = {json.dumps(str(ws))}
[[plugins.shell.settings.programs]]
program = "wc"
"""
    result = load_with_profile(profile)
    loaded = {i.plugin_id for i in result.report.plugins if i.status == "loaded"}
    assert loaded >= {"file", "memory", "catalog", "source", "example"}, result.report.diagnostics
    return result.registry


# A line break inside a paragraph is allowed only before a list item or an indented/fenced line.
_WRAP = re.compile(r"[^\n]\n(?![ \t]|[-*+] |\d{1,3}[.)] |```|\n)")
_ENDS = (".", "!", "?", ":", ")", "`", '"')


def _check_description(name: str, text: str) -> list[str]:
    problems = []
    if _WRAP.search(text):
        problems.append(f"{name}: a hard-wrapped line break inside a paragraph: {text[:120]!r}")
    summary = summary_line(text)
    if not summary.endswith(_ENDS):
        problems.append(f"{name}: summary does not end a sentence: {summary[-80:]!r}")
    return problems


def test_router_descriptions_have_no_wrapped_sentences(registry):
    tools = render_router(registry, ToolContext(surface="router", agent="t"))
    assert tools
    problems = [
        p for t in tools for p in _check_description(t["function"]["name"], t["function"]["description"])
    ]
    assert problems == []


def test_phase_catalogue_summaries_end_at_a_sentence(registry):
    ctx = phase_context(ToolContext(surface="phase", agent="t"), ["*"])
    phase = render_phase(registry, ctx, ["*"])
    assert phase.ops
    problems = []
    for op in phase.ops:
        problems += _check_description(op.kind, op.description)
        assert summary_line(op.description) in phase.prompt_text(), op.kind  # the prompt shows it whole
    assert problems == []


def test_docstrings_are_unwrapped_into_paragraphs_keeping_lists():
    doc = """Replace exact text in a file. Fails when the text is missing, or appears
    more than once.

    Rules:
    - paths are relative
    - links are not followed
    """
    assert description_from_docstring(doc) == (
        "Replace exact text in a file. Fails when the text is missing, or appears more than once."
        "\n\nRules:\n- paths are relative\n- links are not followed"
    )
    assert summary_line(description_from_docstring(doc)).endswith("appears more than once.")
