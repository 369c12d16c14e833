"""HTML to readable text, with the title and the links, using only the standard library parser.

Scripts, styles, templates and other non-content elements are dropped; block elements become line
breaks, headings get ``#`` marks, list items ``-``, and links keep their text in the flow while
their absolute URLs are collected separately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

_SKIP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "canvas",
        "head",
        "select",
        "button",
    }
)
_BLOCK = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "blockquote",
        "pre",
        "table",
        "tr",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "form",
        "fieldset",
        "figure",
        "figcaption",
        "address",
        "hr",
        "br",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "td",
        "th",
        "details",
        "summary",
    }
)
_VOID = frozenset(
    {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"}
)


@dataclass
class PageText:
    """The readable form of a page."""

    title: str = ""
    text: str = ""
    links: list[dict[str, str]] = field(default_factory=list)


class _Extractor(HTMLParser):
    def __init__(self, base_url: str, max_links: int) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.max_links = max_links
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.links: list[dict[str, str]] = []
        self._seen_links: set[str] = set()
        self._skip_depth = 0
        self._in_title = False
        self._pre = 0
        self._link_href: str | None = None
        self._link_text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
            return
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth += 1
            return
        if self._skip_depth:
            return
        if tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base_url = urljoin(self.base_url, href)
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("- ")
        elif tag == "pre":
            self._pre += 1
        elif tag == "a":
            self._link_href = dict(attrs).get("href")
            self._link_text = []
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self.parts.append(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth = max(0, self._skip_depth - 1)
            return
        if self._skip_depth:
            return
        if tag == "a" and self._link_href is not None:
            self._add_link(self._link_href, " ".join("".join(self._link_text).split()))
            self._link_href = None
        if tag == "pre":
            self._pre = max(0, self._pre - 1)
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
            return
        if self._skip_depth:
            return
        if self._link_href is not None:
            self._link_text.append(data)
        self.parts.append(data if self._pre else re.sub(r"\s+", " ", data))

    def _add_link(self, href: str, text: str) -> None:
        href = href.strip()
        if not href or href.startswith("#") or len(self.links) >= self.max_links:
            return
        url = urljoin(self.base_url, href)
        if urlsplit(url).scheme not in ("http", "https") or url in self._seen_links:
            return
        self._seen_links.add(url)
        self.links.append({"text": text[:200], "url": url})


def html_to_text(html: str, base_url: str, *, max_links: int = 100) -> PageText:
    """Readable text, title and absolute http(s) links of an HTML document."""
    parser = _Extractor(base_url, max_links)
    try:
        parser.feed(html)
        parser.close()
    except Exception:  # html.parser is lenient; a pathological document keeps what was parsed
        pass
    return PageText(
        title=" ".join("".join(parser.title_parts).split()),
        text=tidy_text("".join(parser.parts)),
        links=parser.links,
    )


def tidy_text(text: str) -> str:
    """Trim each line and collapse runs of blank lines to one."""
    lines = [line.strip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip()
