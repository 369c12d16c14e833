"""HTML to readable text, with the title and the links.

Scripts, styles, templates and other non-content elements are dropped; block elements become line
breaks, headings get ``#`` marks, list items ``-``, and links keep their text in the flow while
their absolute URLs are collected separately.

The page is attacker-chosen, so the tokenizer is lxml's (libxml2, C, linear in the input) driven
through its parser-target interface (start / end / data events, no tree is built): the standard
library's ``html.parser`` is quadratic on inputs such as ``<a<a<a…`` (100 KB took 9 s). The event
handlers do constant work per event, and check a deadline every few thousand events so a caller's
timeout also stops the conversion. lxml is imported when a page is converted, not on import.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
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


MAX_TITLE = 1_000
MAX_LINK_URL = 2_048
_CHECK_EVERY = 2_048
_WS = re.compile(r"\s+")


class ConversionTimeout(Exception):
    """The conversion passed its deadline (the caller reports the timeout)."""


@dataclass
class PageText:
    """The readable form of a page."""

    title: str = ""
    text: str = ""
    links: list[dict[str, str]] = field(default_factory=list)


class _Extractor:
    """An lxml parser target: collects text, title and links from start / end / data events."""

    def __init__(self, base_url: str, max_links: int, deadline: float | None) -> None:
        self.base_url = base_url
        self.max_links = max_links
        self.deadline = deadline
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.title_len = 0
        self.links: list[dict[str, str]] = []
        self._seen_links: set[str] = set()
        self._events = 0
        self._skip_depth = 0  # inside script, style, svg, … (the head too)
        self._foreign_depth = 0  # inside a skipped element other than head: its <title> is not the page's
        self._in_title = False
        self._title_done = False
        self._pre = 0
        self._link_href: str | None = None
        self._link_text: list[str] = []
        self._link_text_len = 0

    def _tick(self) -> None:
        self._events += 1
        if (
            self.deadline is not None
            and self._events % _CHECK_EVERY == 0
            and time.monotonic() > self.deadline
        ):
            raise ConversionTimeout

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._tick()
        if tag == "title" and not self._title_done and not self._foreign_depth:
            self._in_title = True
            return
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth += 1
            self._foreign_depth += tag != "head"
            return
        if self._skip_depth:
            return
        if tag == "base":
            href = attrib.get("href")
            if href and len(href) <= MAX_LINK_URL:
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
            self._link_href = attrib.get("href")
            self._link_text = []
            self._link_text_len = 0
        elif tag == "img":
            alt = " ".join((attrib.get("alt") or "")[:MAX_TITLE].split())
            if alt:
                self.parts.append(f"[image: {alt}]")

    def end(self, tag: str) -> None:
        self._tick()
        if tag == "title" and self._in_title:
            self._in_title = False
            self._title_done = True
            return
        if tag in _SKIP and tag not in _VOID:
            self._skip_depth = max(0, self._skip_depth - 1)
            if tag != "head":
                self._foreign_depth = max(0, self._foreign_depth - 1)
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

    def data(self, data: str) -> None:
        self._tick()
        if self._in_title:
            if self.title_len < MAX_TITLE:
                self.title_parts.append(data[: MAX_TITLE - self.title_len])
                self.title_len += len(self.title_parts[-1])
            return
        if self._skip_depth:
            return
        if self._link_href is not None and self._link_text_len < 400:
            self._link_text.append(data[:400])
            self._link_text_len += len(self._link_text[-1])
        self.parts.append(data if self._pre else _WS.sub(" ", data))

    def comment(self, text: str) -> None:
        self._tick()

    def close(self) -> None:
        return None

    def _add_link(self, href: str, text: str) -> None:
        href = href.strip()
        if not href or href.startswith("#") or len(self.links) >= self.max_links or len(href) > MAX_LINK_URL:
            return
        url = urljoin(self.base_url, href)
        if urlsplit(url).scheme not in ("http", "https") or url in self._seen_links:
            return
        self._seen_links.add(url)
        self.links.append({"text": text[:200], "url": url})


def html_to_text(
    html: str, base_url: str, *, max_links: int = 100, deadline: float | None = None
) -> PageText:
    """Readable text, title and absolute http(s) links of an HTML document. ``deadline`` is a
    ``time.monotonic()`` value; past it, ``ConversionTimeout`` is raised."""
    from lxml import etree

    extractor = _Extractor(base_url, max_links, deadline)
    # the text is already decoded: hand libxml2 UTF-8 and tell it so, whatever <meta> says
    parser = etree.HTMLParser(target=extractor, recover=True, no_network=True, encoding="utf-8")
    try:
        parser.feed(html.encode("utf-8", errors="replace"))
        parser.close()
    except ConversionTimeout:
        raise
    except etree.LxmlError:  # libxml2 recovers from almost anything; keep what was parsed
        pass
    return PageText(
        title=" ".join("".join(extractor.title_parts).split()),
        text=tidy_text("".join(extractor.parts)),
        links=extractor.links,
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
