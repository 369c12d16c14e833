"""``web_fetch``: fetch one URL safely and return readable text. Imports httpx (only when it runs).

Every hop — the first request and each redirect — goes through the same steps: the URL must be
http(s) without credentials; its host is resolved once and every address checked by ``ssrf``; the
connection is made to a checked address (the request URL names the IP, the ``Host`` header names
the host, and for https the TLS SNI and certificate check use the host name through httpcore's
``sni_hostname`` extension), so no second DNS lookup can swap the address. Redirects are followed
by hand, up to ``max_redirects``. Bodies are read as raw bytes under ``max_bytes``, with
``Accept-Encoding: identity`` asked for and gzip/deflate decoded by this module under the same cap,
so a compression bomb stops at the cap. ``trust_env=False``: no proxy or netrc from the environment.

Everything done with attacker-chosen content after the body is read — decoding it (only with an
allowlisted text charset, ``charsets``) and turning HTML into text (``html_text``, linear) — runs in
a worker thread, off the event loop, under what is left of the same ``timeout_s`` deadline. Host
names are length-checked before IDNA encoding (the codec is quadratic in a label's length).
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import time
import zlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    ToolContext,
    ToolDenied,
    ToolExecutionError,
    ToolTimeout,
)

from .availability import usable_settings
from .charsets import decode_text
from .html_text import ConversionTimeout, html_to_text, tidy_text
from .settings import FetchSettings
from .ssrf import AddressRefused, HostAllowlist, IPAddress, normalise_host, resolve_checked

REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
MAX_HOST = 253
MAX_LABEL = 63


class BodyTooLarge(Exception):
    """The body passed ``max_bytes`` (raw or decoded)."""


@dataclass(frozen=True, slots=True)
class Target:
    """One hop's URL, split into what the guard and the connection need."""

    url: str
    scheme: str
    host: str  # as written (lower-case, no brackets), used for the allowlist and messages
    ascii_host: str  # IDNA form, for the Host header and SNI
    port: int
    path_and_query: str

    def host_header(self) -> str:
        host = f"[{self.ascii_host}]" if ":" in self.ascii_host else self.ascii_host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    def url_for(self, ip: IPAddress) -> str:
        host = f"[{ip}]" if ip.version == 6 else str(ip)
        return f"{self.scheme}://{host}:{self.port}{self.path_and_query}"


@dataclass
class Fetched:
    """A fetched body and what is known about it."""

    url: str
    final_url: str
    status: int
    content_type: str
    charset: str | None
    body: bytes
    redirects: list[str] = field(default_factory=list)


def parse_target(url: str) -> Target:
    """Split and check a URL: http/https only, a host, no credentials. Raises ``ToolDenied``."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ToolDenied(f"URL {url[:200]!r} is malformed ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolDenied(
            f"URL scheme {scheme or '(none)'!r} is refused: only http:// and https:// URLs can be fetched"
        )
    if parts.username is not None or parts.password is not None:
        raise ToolDenied("URLs carrying credentials (user:password@host) are refused")
    host = normalise_host(parts.hostname or "")
    if not host or any(c in host for c in "\x00 \t\r\n"):
        raise ToolDenied(f"URL {url[:200]!r} has no valid host")
    # before IDNA encoding, which is quadratic in a label's length: DNS allows no longer names anyway
    if len(host) > MAX_HOST or any(len(label) > MAX_LABEL for label in host.split(".")):
        raise ToolDenied(
            f"host {host[:60]!r}… is too long: a host name has at most {MAX_HOST} characters "
            f"and at most {MAX_LABEL} per dot-separated label"
        )
    try:
        ascii_host = str(ipaddress.ip_address(host)) if ":" in host else host.encode("idna").decode("ascii")
    except (UnicodeError, ValueError):
        raise ToolDenied(f"host {host[:100]!r} is not a valid host name") from None
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(
        url=url,
        scheme=scheme,
        host=host,
        ascii_host=ascii_host,
        port=port or (443 if scheme == "https" else 80),
        path_and_query=path,
    )


# --------------------------------------------------------------------------- bounded body


class _Decoder:
    """Identity, gzip or deflate, producing at most ``room`` bytes per call."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding in ("", "identity"):
            self._z = None
        elif encoding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._z = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise ToolExecutionError(
                f"the server sent Content-Encoding {encoding!r}, which web_fetch cannot decode "
                "(supported: identity, gzip, deflate)"
            )
        self._started = False

    def feed(self, data: bytes, room: int) -> bytes:
        if self._z is None:
            if len(data) > room:
                raise BodyTooLarge
            return data
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error:
            if self.encoding == "deflate" and not self._started:  # raw deflate without zlib header
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                self._started = True
                return self.feed(data, room)
            raise ToolExecutionError(f"the response body is not valid {self.encoding} data") from None
        self._started = True
        if len(out) > room or self._z.unconsumed_tail:
            raise BodyTooLarge
        return out

    def flush(self, room: int) -> bytes:
        if self._z is None:
            return b""
        out = self._z.flush()
        if len(out) > room:
            raise BodyTooLarge
        return out


async def read_capped(response: httpx.Response, max_bytes: int) -> bytes:
    """The body, decoded, refusing more than ``max_bytes`` raw or decoded bytes."""
    declared = response.headers.get("content-length")
    if declared and declared.strip().isdigit() and int(declared) > max_bytes:
        raise BodyTooLarge
    decoder = _Decoder(response.headers.get("content-encoding", "identity").strip().lower())
    raw = 0
    out = bytearray()
    async for chunk in response.aiter_raw():
        raw += len(chunk)
        if raw > max_bytes:
            raise BodyTooLarge
        out += decoder.feed(chunk, max_bytes - len(out))
    out += decoder.flush(max_bytes - len(out))
    return bytes(out)


# --------------------------------------------------------------------------- fetching


def _content_type(response: httpx.Response) -> tuple[str, str | None]:
    value = response.headers.get("content-type", "")
    mime, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'")
    return mime.strip().lower(), charset


async def _send_pinned(
    client: httpx.AsyncClient, target: Target, addresses: list[IPAddress]
) -> httpx.Response:
    """GET ``target`` from the first checked address that accepts a connection."""
    extensions: dict[str, Any] = {"sni_hostname": target.ascii_host} if target.scheme == "https" else {}
    last: Exception | None = None
    for ip in addresses:
        request = client.build_request(
            "GET", target.url_for(ip), headers={"Host": target.host_header()}, extensions=extensions
        )
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last = exc
    raise ToolExecutionError(f"cannot connect to {target.host}:{target.port} ({last})")


async def _fetch(url: str, fs: FetchSettings, allowlist: HostAllowlist) -> Fetched:
    timeout = httpx.Timeout(fs.timeout_s, connect=fs.connect_timeout_s)
    headers = {
        "User-Agent": fs.user_agent,
        "Accept-Encoding": "identity",
        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
    }
    redirects: list[str] = []
    current = url
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=fs.ca_bundle) if fs.ca_bundle else True
    async with httpx.AsyncClient(
        trust_env=False, follow_redirects=False, timeout=timeout, headers=headers, verify=verify
    ) as client:
        for _hop in range(fs.max_redirects + 1):
            target = parse_target(current)
            try:
                addresses = await asyncio.to_thread(resolve_checked, target.host, target.port, allowlist)
            except AddressRefused as exc:
                where = f" (reached by redirect from {redirects[-1]})" if redirects else ""
                raise ToolDenied(f"{exc}{where}") from None
            response = await _send_pinned(client, target, addresses)
            try:
                if response.status_code in REDIRECT_CODES:
                    location = response.headers.get("location")
                    if not location:
                        raise ToolExecutionError(
                            f"HTTP {response.status_code} redirect from {current} has no Location"
                        )
                    redirects.append(current)
                    current = urljoin(current, location.strip())
                    continue
                if response.status_code >= 400:
                    raise ToolExecutionError(
                        f"HTTP {response.status_code} {response.reason_phrase} from {current}"
                    )
                mime, charset = _content_type(response)
                if mime not in fs.content_types:
                    raise ToolExecutionError(
                        f"content type {mime or '(none)'!r} of {current} is not fetched as text; "
                        f"supported: {', '.join(fs.content_types)}"
                    )
                try:
                    body = await read_capped(response, fs.max_bytes)
                except BodyTooLarge:
                    raise ToolExecutionError(
                        f"the body of {current} is larger than max_bytes={fs.max_bytes} "
                        "(counted on raw and on decompressed bytes); it was not read further"
                    ) from None
                return Fetched(
                    url=url,
                    final_url=current,
                    status=response.status_code,
                    content_type=mime,
                    charset=charset,
                    body=body,
                    redirects=redirects,
                )
            finally:
                await response.aclose()
    raise ToolExecutionError(
        f"too many redirects: more than max_redirects={fs.max_redirects} starting at {url}"
    )


async def fetch_url(url: str, fs: FetchSettings) -> Fetched:
    """Fetch ``url`` under every rule of ``fs``. Raises ``ToolDenied``, ``ToolTimeout`` or
    ``ToolExecutionError`` with a message that says what happened."""
    allowlist = HostAllowlist.parse(fs.allow_hosts)
    try:
        return await asyncio.wait_for(_fetch(url, fs, allowlist), fs.timeout_s)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise ToolTimeout(f"fetching {url[:200]} did not finish within {fs.timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        # the message may quote a header the server chose: keep it short
        detail = str(exc) if len(str(exc)) <= 300 else str(exc)[:300] + "…"
        raise ToolExecutionError(f"fetching {url[:200]} failed: {type(exc).__name__}: {detail}") from None


@dataclass
class ReadPage:
    """A fetched body as text: title, text and links (HTML), the charset used and notes."""

    title: str
    text: str
    links: list[dict[str, str]]
    charset: str
    notes: list[str]


def read_page(fetched: Fetched, max_links: int, deadline: float | None = None) -> ReadPage:
    """Decode and convert a fetched body (CPU work on attacker-chosen bytes: run it off the loop).
    ``deadline`` (``time.monotonic()``) stops the HTML conversion with ``ConversionTimeout``."""
    is_html = fetched.content_type in HTML_TYPES
    text, choice = decode_text(fetched.body, fetched.charset, sniff_html=is_html)
    notes = [choice.note] if choice.note else []
    if is_html:
        page = html_to_text(text, fetched.final_url, max_links=max_links, deadline=deadline)
        return ReadPage(page.title, page.text, page.links, choice.codec, notes)
    return ReadPage("", tidy_text(text), [], choice.codec, notes)


async def web_fetch(
    url: str, max_length: int = 20000, start_index: int = 0, ctx: ToolContext | None = None
) -> dict[str, Any]:
    """The ``web_fetch`` handler: fetch, convert to text, return one window of it."""
    fs = usable_settings(ctx, "web_fetch").fetch
    deadline = time.monotonic() + fs.timeout_s
    fetched = await fetch_url(url, fs)
    # one timeout_s for the whole call: what the fetch left is the conversion's budget
    try:
        page = await asyncio.wait_for(
            asyncio.to_thread(read_page, fetched, fs.max_links, deadline),
            max(deadline - time.monotonic(), 0.001),
        )
    except (asyncio.TimeoutError, ConversionTimeout):
        raise ToolTimeout(
            f"fetching and converting {url[:200]} to text did not finish within timeout_s={fs.timeout_s:g} s "
            f"({len(fetched.body)} bytes of {fetched.content_type})"
        ) from None
    text = page.text
    total = len(text)
    if start_index > 0 and start_index >= total:
        raise InvalidToolArguments(
            f"start_index {start_index} is past the end of the text ({total} characters)",
            tool="web_fetch",
            problems=[ArgumentProblem("/start_index", f"must be less than {total}")],
        )
    window = text[start_index : start_index + max_length]
    end = start_index + len(window)
    return {
        "url": fetched.url,
        "final_url": fetched.final_url,
        "status": fetched.status,
        "content_type": fetched.content_type,
        "title": page.title,
        "charset": page.charset,
        "text": window,
        "start_index": start_index,
        "total_length": total,
        "truncated": end < total,
        "next_start_index": end if end < total else None,
        "links": page.links,
        "redirects": fetched.redirects,
        "notes": page.notes,
    }
