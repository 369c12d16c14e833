"""``web_search``: one small backend interface, with SearXNG (JSON API) and Brave Search API.

A backend turns a query into ``SearchResult`` items. Backend endpoints are chosen by the operator
in settings, so they are trusted: they are not passed through the SSRF guard (a SearXNG instance
usually lives on a private address), but responses are still read under a byte cap, with a
timeout and ``trust_env=False``. Imports httpx (only when the tool runs).

A backend's failure is told to the model in Reyn's words (the backend, the HTTP status, the kind of
error); the backend's own text — an error body, an httpx message quoting the request — may echo
the API key in any encoding, so it goes only to the operator's log (``reyn.remote.web.search``,
see ``reyn_core.log_remote_failure``), whose reference the message cites.

Result texts come from the web through the backend, so they are handled as hostile: the body's JSON
values are counted before it is parsed (at most ``MAX_RESPONSE_VALUES``: parsing costs per value, not
per byte), then it is parsed off the event loop with JSON's numbers only (``reyn_core.host.read_json``);
only the first ``max_results`` items are looked at, each field is cut to a fixed length before tags
are stripped, and the tag pattern is linear (``<[^<>]*>``: a run of ``<`` without ``>`` cannot make
it backtrack).
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import asdict, dataclass
from html import unescape
from typing import Any, Protocol

import httpx

from reyn_core import ToolContext, ToolExecutionError, ToolRuntimeMissing, ToolTimeout, log_remote_failure
from reyn_core.host import TooManyJsonValues, read_json

from .availability import usable_settings
from .fetch import BodyTooLarge, read_capped
from .settings import SearchSettings

_TAG = re.compile(r"<[^<>]*>")
ERROR_BODY_BYTES = 8_192  # what the operator's log keeps of a backend's error answer
MAX_TITLE = 500
MAX_SNIPPET = 2_000
MAX_URL = 2_048
LOG_SOURCE = "web.search"
# A response's JSON values, counted before it is parsed; a page of results holds a few hundred
MAX_RESPONSE_VALUES = 200_000


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit: ``{title, url, snippet}``."""

    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    """What a search backend implements."""

    @property
    def name(self) -> str:
        """The backend's name, in its errors."""
        ...

    async def search(self, client: httpx.AsyncClient, query: str, max_results: int) -> list[SearchResult]:
        """Up to ``max_results`` results for ``query``."""
        ...


def _report(what: str, raw: str) -> str:
    """``what`` (Reyn's words) for the model; the backend's own text to the operator's log."""
    return f"{what}; {log_remote_failure(LOG_SOURCE, what, raw)}" if raw.strip() else what


def _clean(text: Any, limit: int) -> str:
    raw = text if isinstance(text, str) else ""
    return " ".join(unescape(_TAG.sub("", raw[: limit * 2])).split())[:limit]


def _results(items: list[Any], max_results: int, title: str, snippet: str) -> list[SearchResult]:
    """The first ``max_results`` well-formed items as results, every field bounded."""
    out: list[SearchResult] = []
    for item in items:
        if len(out) >= max_results:
            break
        url = item.get("url") if isinstance(item, dict) else None
        if isinstance(url, str) and url and len(url) <= MAX_URL:
            out.append(
                SearchResult(_clean(item.get(title), MAX_TITLE), url, _clean(item.get(snippet), MAX_SNIPPET))
            )
    return out


async def _get_json(
    client: httpx.AsyncClient,
    url: str,
    params: dict[str, Any],
    headers: dict[str, str],
    max_bytes: int,
    backend: str,
) -> Any:
    async with client.stream("GET", url, params=params, headers=headers) as response:
        if response.status_code >= 400:
            # the body is the backend's own text (it may echo the key): the operator's log gets it
            what = f"the {backend} search backend answered HTTP {response.status_code}"
            try:
                body = await read_capped(response, ERROR_BODY_BYTES)
            except (BodyTooLarge, httpx.HTTPError, ToolExecutionError):
                body = b"(the error body could not be read whole)"
            raise ToolExecutionError(_report(what, body.decode("utf-8", "replace"))) from None
        try:
            body = await read_capped(response, max_bytes)
        except BodyTooLarge:
            raise ToolExecutionError(
                f"the {backend} search response is larger than {max_bytes} bytes"
            ) from None
    try:
        # up to max_bytes, counted then parsed: not on the loop
        return await asyncio.to_thread(read_json, body, MAX_RESPONSE_VALUES)
    except TooManyJsonValues as exc:
        raise ToolExecutionError(
            f"the {backend} search response holds more than {exc.limit} JSON values; it was not read"
        ) from None
    except (ValueError, RecursionError):
        what = f"the {backend} search backend did not answer with JSON"
        raise ToolExecutionError(_report(what, body[:ERROR_BODY_BYTES].decode("utf-8", "replace"))) from None


@dataclass(frozen=True)
class SearxngBackend:
    """SearXNG ``/search?format=json`` (the instance must enable the json format)."""

    url: str
    max_bytes: int
    name: str = "searxng"

    async def search(self, client: httpx.AsyncClient, query: str, max_results: int) -> list[SearchResult]:
        endpoint = self.url.rstrip("/") + "/search"
        data = await _get_json(
            client, endpoint, {"q": query, "format": "json"}, {}, self.max_bytes, self.name
        )
        items = data.get("results") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise ToolExecutionError("the searxng search backend answered without a 'results' list")
        return _results(items, max_results, "title", "content")


@dataclass(frozen=True)
class BraveBackend:
    """Brave Search API ``web/search`` with the ``X-Subscription-Token`` header."""

    endpoint: str
    api_key: str
    max_bytes: int
    name: str = "brave"

    async def search(self, client: httpx.AsyncClient, query: str, max_results: int) -> list[SearchResult]:
        headers = {"X-Subscription-Token": self.api_key, "Accept": "application/json"}
        data = await _get_json(
            client, self.endpoint, {"q": query, "count": max_results}, headers, self.max_bytes, self.name
        )
        web = data.get("web") if isinstance(data, dict) else None
        items = web.get("results") if isinstance(web, dict) else None
        if items is None:
            return []
        if not isinstance(items, list):
            raise ToolExecutionError("the brave search backend answered with a malformed 'web.results'")
        return _results(items, max_results, "title", "description")


def backend_from_settings(s: SearchSettings) -> SearchBackend:
    """The configured backend. Call ``search_problem`` first: this assumes the settings are complete."""
    if s.backend == "searxng" and s.searxng is not None:
        return SearxngBackend(s.searxng.url, s.max_bytes)
    if s.backend == "brave" and s.brave is not None:
        return BraveBackend(s.brave.endpoint, os.environ.get(s.brave.api_key_env, ""), s.max_bytes)
    if s.backend == "brave":
        return BraveBackend(
            "https://api.search.brave.com/res/v1/web/search", os.environ.get("BRAVE_API_KEY", ""), s.max_bytes
        )
    raise ToolRuntimeMissing("web_search has no usable backend configured", tool="web_search")


async def web_search(
    query: str, max_results: int | None = None, ctx: ToolContext | None = None
) -> dict[str, Any]:
    """The ``web_search`` handler."""
    s = usable_settings(ctx, "web_search").search
    backend = backend_from_settings(s)
    limit = max_results or s.max_results
    timeout = httpx.Timeout(s.timeout_s)
    try:
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, timeout=timeout, headers={"Accept-Encoding": "identity"}
        ) as client:
            results = await asyncio.wait_for(backend.search(client, query, limit), s.timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise ToolTimeout(
            f"the {backend.name} search backend did not answer within {s.timeout_s:g} s"
        ) from None
    except httpx.HTTPError as exc:
        # an httpx message can quote the request (URL, a proxy's answer): only its kind is shown
        what = f"the {backend.name} search backend failed ({type(exc).__name__})"
        raise ToolExecutionError(_report(what, f"{type(exc).__name__}: {exc}")) from None
    return {"backend": backend.name, "query": query, "results": [asdict(r) for r in results]}
