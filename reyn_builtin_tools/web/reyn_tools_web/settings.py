"""Settings of the web pack: ``[plugins.web.settings]`` in the profile. Unknown keys are errors."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_CONTENT_TYPES: tuple[str, ...] = (
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "text/csv",
    "text/xml",
    "application/xml",
    "application/json",
    "application/ld+json",
    "application/rss+xml",
    "application/atom+xml",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FetchSettings(_Strict):
    """``[plugins.web.settings.fetch]``: ``web_fetch`` is off until ``enabled = true``."""

    enabled: bool = False
    allow_hosts: list[str] = []
    max_bytes: int = Field(default=2_000_000, ge=1_024, le=50_000_000)
    timeout_s: float = Field(default=20.0, gt=0, le=300)
    connect_timeout_s: float = Field(default=10.0, gt=0, le=120)
    max_redirects: int = Field(default=5, ge=0, le=20)
    content_types: list[str] = Field(default_factory=lambda: list(DEFAULT_CONTENT_TYPES))
    user_agent: str = "reyn-web/0.1 (+https://example.invalid/reyn)"
    max_links: int = Field(default=100, ge=0, le=1_000)
    ca_bundle: str | None = None  # PEM file of extra trusted CAs (an internal CA); default: system/certifi

    @field_validator("allow_hosts")
    @classmethod
    def _valid_hosts(cls, value: list[str]) -> list[str]:
        from .ssrf import HostAllowlist

        HostAllowlist.parse(value)  # raises ValueError naming the bad entry
        return value


class SearxngSettings(_Strict):
    """A SearXNG instance with its JSON API enabled (``search.formats`` includes ``json``)."""

    url: str


class BraveSettings(_Strict):
    """The Brave Search API. The key is read from the environment variable ``api_key_env``."""

    api_key_env: str = "BRAVE_API_KEY"
    endpoint: str = "https://api.search.brave.com/res/v1/web/search"


class SearchSettings(_Strict):
    """``[plugins.web.settings.search]``: choose ``backend`` and fill its table."""

    backend: Literal["searxng", "brave"] | None = None
    searxng: SearxngSettings | None = None
    brave: BraveSettings | None = None
    max_results: int = Field(default=5, ge=1, le=20)
    timeout_s: float = Field(default=15.0, gt=0, le=120)
    max_bytes: int = Field(default=2_000_000, ge=1_024, le=20_000_000)


class WebSettings(_Strict):
    """The web pack's settings: ``fetch`` and ``search`` tables."""

    fetch: FetchSettings = Field(default_factory=FetchSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
