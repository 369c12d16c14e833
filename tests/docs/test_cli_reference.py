"""docs/cli.md documents every flag and the exit codes of `reyn chat` and `reyn phase run` (commands of
reyn-loops' `loops` plugin), and docs/demo.md those of `reyn-demo`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def section(title_prefix: str, page: str = "cli.md") -> str:
    text = (DOCS / page).read_text(encoding="utf-8")
    match = re.search(rf"^## `{re.escape(title_prefix)}[^\n]*\n(.*?)(?=^## )", text, re.M | re.S)
    assert match, f"docs/{page} has no section starting with `{title_prefix}`"
    return match.group(1)


def subparser(*path: str) -> argparse.ArgumentParser:
    from reyn_loops.cli import chat, phase

    parser = {"chat": chat, "phase": phase}[path[0]].build_parser()
    for name in path[1:]:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _demo_parser():
    from reyn_demo.cli import build_parser

    return build_parser()


@pytest.mark.parametrize(
    ("title", "parser", "page"),
    [
        ("reyn chat", lambda: subparser("chat"), "cli.md"),
        ("reyn phase run", lambda: subparser("phase", "run"), "cli.md"),
        ("reyn-demo", _demo_parser, "demo.md"),
    ],
    ids=["reyn chat", "reyn phase run", "reyn-demo"],
)
def test_every_flag_and_the_exit_codes_are_documented(title, parser, page):
    body = section(title, page=page)
    flags = [opt for a in parser()._actions for opt in a.option_strings if opt.startswith("--")]
    flags = [f for f in flags if f != "--help"]
    assert flags
    for flag in flags:
        assert f"`{flag}" in body, f"{title}: {flag} is not documented in docs/{page}"
    for code in ("0", "1", "2"):
        assert re.search(rf"^\| {code} \|", body, re.M), f"{title}: exit code {code} is not documented"


def test_plugins_list_documents_every_source_kind_and_what_index_means():
    from reyn_core.loading.step3_provenance.direct_url import SOURCE_KINDS

    body = section("reyn plugins list")
    for kind in SOURCE_KINDS:
        assert f"`{kind}`" in body, kind
    assert "`--find-links`" in body  # a wheelhouse install by name shows `index`


def test_tools_render_phase_prints_the_output_contract_the_readme_promises(tmp_path, reyn_cli):
    import json

    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert (
        "reyn tools render --surface phase      # the phase op catalogue and output-contract schema" in readme
    )

    def render(*extra: str) -> str:
        proc = reyn_cli("tools", "render", "--surface", "phase", *extra, cwd=tmp_path, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    head, _, schema = render().partition("JSON Schema of the reply (the phase output contract):\n")
    assert head.strip() and json.loads(schema)["title"] == "PhaseOutput"
    assert json.loads(render("--json"))["output_schema"] == json.loads(schema)
