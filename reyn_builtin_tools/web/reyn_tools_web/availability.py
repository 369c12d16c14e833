"""Whether the web tools can run with the operator's settings, and how to fix it when they cannot.

The tools' ``available(ctx)`` callbacks, their handlers (``usable_settings``) and ``diagnostics``
(for ``reyn doctor``) share these checks, so the model-facing reason and the operator-facing hint
never disagree. Light: pydantic and the standard library only.
"""

from __future__ import annotations

import os
from typing import Any

from reyn_core import ToolContext, ToolRuntimeMissing, settings_as

from .settings import WebSettings

FETCH_HOW = (
    "enable it in the profile: [plugins.web.settings.fetch] enabled = true "
    "(optionally allow_hosts = [...] for non-public hosts)"
)
SEARCH_HOW = (
    'configure a backend in the profile: [plugins.web.settings.search] backend = "searxng" with '
    '[plugins.web.settings.search.searxng] url = "https://searx.example", or backend = "brave" '
    "with the API key in $BRAVE_API_KEY"
)


def fetch_problem(settings: WebSettings) -> str | None:
    """Why ``web_fetch`` cannot run, or None."""
    if not settings.fetch.enabled:
        return f"web_fetch is switched off (opt-in); {FETCH_HOW}"
    return None


def search_problem(settings: WebSettings) -> str | None:
    """Why ``web_search`` cannot run, or None."""
    s = settings.search
    if s.backend is None:
        return f"web_search has no backend configured; {SEARCH_HOW}"
    if s.backend == "searxng" and s.searxng is None:
        return (
            'web_search backend "searxng" needs [plugins.web.settings.search.searxng] url = '
            '"https://your-searxng" (with the JSON format enabled on that instance)'
        )
    env = key_variable(settings)
    if env is not None:
        if not os.environ.get(env):
            return (
                f'web_search backend "brave" needs an API key in the environment variable ${env}; '
                "set it, or change [plugins.web.settings.search.brave] api_key_env"
            )
    return None


_PROBLEMS = {"web_fetch": fetch_problem, "web_search": search_problem}


def key_variable(settings: WebSettings) -> str | None:
    """The environment variable ``web_search``'s availability reads: the Brave backend's API key."""
    s = settings.search
    if s.backend != "brave":
        return None
    return s.brave.api_key_env if s.brave else "BRAVE_API_KEY"


def usable_settings(ctx: ToolContext | None, tool: str) -> WebSettings:
    """The web settings of this call, when ``tool`` (``web_fetch`` or ``web_search``) can run with
    them; otherwise ``ToolRuntimeMissing`` saying how to enable or configure it."""
    settings = settings_as(ctx, WebSettings)
    problem = _PROBLEMS[tool](settings)
    if problem:
        raise ToolRuntimeMissing(problem, tool=tool)
    return settings


def fetch_available(ctx: ToolContext) -> bool:
    """Gate layer 3 of ``web_fetch``: raises ``ToolRuntimeMissing`` saying how to enable it."""
    usable_settings(ctx, "web_fetch")
    return True


def search_available(ctx: ToolContext) -> bool:
    """Gate layer 3 of ``web_search``: raises ``ToolRuntimeMissing`` saying how to configure it."""
    usable_settings(ctx, "web_search")
    return True


def diagnostics(settings: Any) -> list[dict[str, str]]:
    """Findings for ``reyn doctor``: dicts with ``code``, ``severity``, ``tool``, ``message``, ``hint``.

    RW001 (info) web_fetch is off; RW002 (warning) web_search has no usable backend.
    """
    s = settings_as(settings, WebSettings)
    out: list[dict[str, str]] = []
    problem = fetch_problem(s)
    if problem:
        out.append(
            {
                "code": "RW001",
                "severity": "info",
                "tool": "web_fetch",
                "message": "web_fetch is switched off (opt-in)",
                "hint": FETCH_HOW,
            }
        )
    problem = search_problem(s)
    if problem:
        message, _, hint = problem.partition("; ")
        out.append(
            {
                "code": "RW002",
                "severity": "warning",
                "tool": "web_search",
                "message": message,
                "hint": hint or SEARCH_HOW,
            }
        )
    return out
