"""Slug and agent-name checks. Slugs become file names on export, so they are held to a narrow,
portable alphabet; every refusal says what was wrong and what is allowed."""

from __future__ import annotations

import re

SLUG_MAX = 64
SLUG_RULE = (
    "1-64 characters: lowercase letters, digits, '-' and '_', starting and ending with a letter or digit"
)
_SLUG_RE = re.compile(r"^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$")
# Names Windows refuses as file names, whatever the extension.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)
AGENT_MAX = 128


def slug_problem(slug: object) -> str | None:
    """Why ``slug`` is not a valid memory slug, or None when it is."""
    if not isinstance(slug, str):
        return f"a slug must be a string, not {type(slug).__name__}"
    if slug == "":
        return f"the slug is empty; a slug is {SLUG_RULE}"
    shown = repr(slug[:40]) + ("..." if len(slug) > 40 else "")
    if "\x00" in slug:
        return f"slug {shown} contains a NUL byte; a slug is {SLUG_RULE}"
    if "/" in slug or "\\" in slug or ".." in slug or slug.startswith("."):
        return f"slug {shown} looks like a path; a slug is a plain name: {SLUG_RULE}"
    if len(slug) > SLUG_MAX:
        return f"slug {shown} is {len(slug)} characters long, over the limit of {SLUG_MAX}"
    if any(ch.isspace() or ord(ch) < 32 for ch in slug):
        return f"slug {shown} contains whitespace or control characters; a slug is {SLUG_RULE}"
    if slug != slug.lower():
        return f"slug {shown} has uppercase letters; use {slug.lower()!r} ({SLUG_RULE})"
    if _SLUG_RE.fullmatch(slug) is None:
        bad = sorted({ch for ch in slug if not (ch.isascii() and (ch.isalnum() or ch in "-_"))})
        if bad:
            return f"slug {shown} contains {', '.join(map(repr, bad))}; a slug is {SLUG_RULE}"
        return f"slug {shown} must start and end with a letter or digit ({SLUG_RULE})"
    if slug in _RESERVED:
        return f"slug {shown} is a reserved device name on Windows; choose another slug"
    return None


def agent_problem(agent: object) -> str | None:
    """Why ``agent`` cannot own an agent layer, or None. The host sets it; this guards the store."""
    if not isinstance(agent, str) or not agent.strip():
        return "the calling agent has no name"
    if len(agent) > AGENT_MAX:
        return f"the agent name is {len(agent)} characters long, over the limit of {AGENT_MAX}"
    if any(ord(ch) < 32 or ch == "\x7f" for ch in agent):
        return "the agent name contains control characters"
    if any("\ud800" <= ch <= "\udfff" for ch in agent):
        return "the agent name contains a lone surrogate, which is not valid Unicode"
    return None
