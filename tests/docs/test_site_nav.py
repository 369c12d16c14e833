"""mkdocs.yml has an explicit nav listing every page under docs/ (and nothing that does not exist),
in the order readers need; the home page links the demo and the concepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def nav_entries(items: list[Any], group: str = "") -> list[tuple[str, str, str]]:
    """(group, title, file) for every page in the nav, depth first."""
    out: list[tuple[str, str, str]] = []
    for item in items:
        for title, value in item.items():
            if isinstance(value, list):
                out += nav_entries(value, title)
            else:
                out.append((group, title, value))
    return out


def nav() -> list[tuple[str, str, str]]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "nav" in config, "mkdocs.yml needs an explicit nav"
    return nav_entries(config["nav"])


def test_every_page_is_in_the_nav_once_and_every_nav_target_exists():
    files = [f for _, _, f in nav()]
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert len(files) == len(set(files)), "a page is listed twice in the nav"
    assert sorted(files) == pages, (
        f"not in nav: {sorted(set(pages) - set(files))}; "
        f"in nav but missing: {sorted(set(files) - set(pages))}"
    )


def test_nav_order_and_groups():
    entries = nav()
    top = [title for group, title, _ in entries if not group]
    assert top == [
        "Home",
        "Demo",
        "Concepts",
        "Writing a plugin",
        "Testing plugins",
        "Surfaces",
        "MCP serve",
        "Render targets",
        "Approvals",
        "Large registries",
    ]
    reference = [title for group, title, _ in entries if group == "Reference"]
    expected = [
        "The author API",
        "Profiles",
        "CLI",
        "Diagnostics",
        "Provenance",
        "Security",
        "Sandbox",
        "Observability",
        "Architecture",
        "Decisions",
    ]
    assert reference[: len(expected)] == expected and set(reference) <= {*expected, "Performance"}
    packs = [f for group, _, f in entries if group == "Packs"]
    assert packs == [
        f"packs/{p}.md" for p in ("file", "web", "memory", "catalog", "mcp", "shell", "source", "search")
    ]


def test_home_page_points_to_the_demo_and_the_concepts():
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    next_steps = text.split("## Where to go next", 1)[1]
    assert "(demo.md)" in next_steps and "(concepts.md)" in next_steps
