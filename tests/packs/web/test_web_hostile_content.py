"""web_fetch / web_search against hostile content from real HTTP servers on 127.0.0.1: attacker-chosen
charsets, HTML that is quadratic for html.parser, over-long IDNA hosts, huge fields. Each pathological
case must end with a specific result or error well within a generous bound (it is never a hang)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from reyn_tools_web.html_text import ConversionTimeout, html_to_text
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool

BOUND_S = 30  # generous: only proves "bounded, not hanging"; the fixed code takes well under a second
# raw UTF-8 bytes in the header, as real servers send them (http.server writes headers as latin-1)
LONG_IDNA_LOCATION = (
    ("http://" + "".join(chr(0x4E00 + i) for i in range(4000)) + ".com/").encode().decode("latin-1")
)
PUNY_BODY = "".join(chr(0x4E00 + i % 20000) for i in range(100_000)).encode("utf-8")[:300_000]


def fetch_settings(**extra: object) -> WebSettings:
    return WebSettings.model_validate(
        {"fetch": {"enabled": True, "allow_hosts": ["127.0.0.1"], "timeout_s": 6, **extra}}
    )


async def fetch(web_registry, ctx, url: str, **extra: object) -> dict:
    started = time.monotonic()
    env = await asyncio.wait_for(
        dispatch_tool(web_registry(fetch_settings(**extra)), "web_fetch", {"url": url}, ctx), BOUND_S
    )
    assert time.monotonic() - started < BOUND_S
    return env


def ok(env: dict) -> dict:
    assert env["status"] == "ok", env
    return env["data"]


@pytest.fixture
def hostile(serve, send):
    def routes(port: int) -> dict:
        return {
            "/punycode": lambda h: send(h, 200, PUNY_BODY, "text/plain; charset=punycode"),
            "/charset": lambda h: send(
                h, 200, b"caf\xc3\xa9 <b>x</b>", "text/plain; charset=" + h.path.partition("?")[2]
            ),
            "/meta-punycode": lambda h: send(
                h,
                200,
                b'<html><head><meta charset="punycode"></head><body>' + PUNY_BODY + b"</body>",
                "text/html",
            ),
            "/meta-latin1": lambda h: send(
                h,
                200,
                b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><p>caf\xe9</p>',
                "text/html",
            ),
            "/sjis": lambda h: send(h, 200, "日本語".encode("shift_jis"), "text/plain; charset=Shift_JIS"),
            "/cp1252": lambda h: send(h, 200, b"\x93quoted\x94", "text/plain; charset=windows-1252"),
            "/lt-a": lambda h: send(h, 200, b"<p>start</p>" + b"<a" * 150_000, "text/html"),
            "/long-title": lambda h: send(
                h, 200, b"<title>" + b"T" * 500_000 + b"</title><p>body</p>", "text/html"
            ),
            "/long-link": lambda h: send(
                h, 200, b'<a href="/' + b"x" * 100_000 + b'">long</a><a href="/short">short</a>', "text/html"
            ),
            "/idna-redirect": lambda h: send(
                h,
                302,
                b"",
                headers={"Location": LONG_IDNA_LOCATION},
            ),
        }

    return serve(routes)


# ---------------------------------------------------------------- charsets


async def test_punycode_charset_is_refused_with_a_note_and_decoded_as_utf8(
    web_registry, ctx, hostile
) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}/punycode"))
    assert data["charset"] == "utf-8"
    assert len(data["notes"]) == 1 and "'punycode' is not a text encoding" in data["notes"][0]
    assert data["text"].startswith("一丁丂")


@pytest.mark.parametrize(
    "label",
    [
        "punycode",
        "idna",
        "rot13",
        "uu",
        "zlib",
        "bz2",
        "base64",
        "hex",
        "utf-7",
        "unicode_escape",
        "undefined",
    ],
)
async def test_non_text_or_unsafe_codecs_are_not_used(web_registry, ctx, hostile, label: str) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}/charset?{label}"))
    assert data["charset"] == "utf-8" and data["text"] == "café <b>x</b>"
    assert f"{label!r} is not a text encoding web_fetch decodes" in data["notes"][0]


@pytest.mark.parametrize("label", ["x-no-such-charset", "a" * 200])
async def test_unknown_or_absurd_charsets_fall_back_with_a_note(
    web_registry, ctx, hostile, label: str
) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}/charset?{label}"))
    assert data["charset"] == "utf-8" and data["text"] == "café <b>x</b>"
    assert "unknown" in data["notes"][0] or "too long" in data["notes"][0]


async def test_meta_charset_goes_through_the_same_allowlist(web_registry, ctx, hostile) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}/meta-punycode"))
    assert data["charset"] == "utf-8" and "<meta> charset 'punycode'" in data["notes"][0]
    latin = ok(await fetch(web_registry, ctx, f"{hostile.base}/meta-latin1"))
    assert latin["charset"] == "iso8859-1" and latin["text"] == "café" and latin["notes"] == []


@pytest.mark.parametrize(
    ("path", "charset", "text"), [("/sjis", "shift_jis", "日本語"), ("/cp1252", "cp1252", "“quoted”")]
)
async def test_real_text_charsets_are_still_honoured(web_registry, ctx, hostile, path, charset, text) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}{path}"))
    assert (data["charset"], data["text"], data["notes"]) == (charset, text, [])


# ---------------------------------------------------------------- HTML conversion


async def test_html_that_is_quadratic_for_html_parser_converts_in_linear_time(
    web_registry, ctx, hostile
) -> None:
    data = ok(await fetch(web_registry, ctx, f"{hostile.base}/lt-a"))
    assert data["text"].startswith("start")


def test_conversion_stops_at_its_deadline() -> None:
    with pytest.raises(ConversionTimeout):
        html_to_text("<p>x</p>" * 10_000, "http://h/", deadline=time.monotonic() - 1)


async def test_title_and_link_urls_are_bounded(web_registry, ctx, hostile) -> None:
    title = ok(await fetch(web_registry, ctx, f"{hostile.base}/long-title"))
    assert title["title"] == "T" * 1000 and title["text"] == "body"
    links = ok(await fetch(web_registry, ctx, f"{hostile.base}/long-link"))
    assert [link["url"] for link in links["links"]] == [f"{hostile.base}/short"]


async def test_the_event_loop_keeps_running_while_a_page_converts(web_registry, ctx, hostile) -> None:
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    beat = asyncio.create_task(heartbeat())
    try:
        ok(await fetch(web_registry, ctx, f"{hostile.base}/punycode"))
    finally:
        beat.cancel()
    assert ticks > 0


# ---------------------------------------------------------------- hosts


async def test_over_long_idna_host_in_a_redirect_is_refused_with_a_short_message(
    web_registry, ctx, hostile
) -> None:
    env = await fetch(web_registry, ctx, f"{hostile.base}/idna-redirect")
    assert env["status"] == "error" and env["error"]["kind"] == "execution_error"
    assert "location header" in env["error"]["message"] and len(env["error"]["message"]) < 700


@pytest.mark.parametrize(
    "host", ["".join(chr(0x4E00 + i) for i in range(600)) + ".com", "a" * 64 + ".com", ("abc." * 70) + "com"]
)
async def test_over_long_hosts_are_denied(web_registry, ctx, host: str) -> None:
    env = await fetch(web_registry, ctx, f"http://{host}/")
    assert env["error"]["kind"] == "denied" and "too long" in env["error"]["message"]


# ---------------------------------------------------------------- search


async def test_search_results_with_hostile_fields_are_bounded(web_registry, ctx, serve, json_route) -> None:
    items = [{"title": "<" * 200_000, "url": "https://a.example/1", "content": "<b" * 100_000}]
    items += [{"title": f"t{i}", "url": f"https://a.example/{i}", "content": "c"} for i in range(2, 5_000)]
    server = serve(lambda port: {"/search": json_route({"results": items})})
    settings = WebSettings.model_validate(
        {"search": {"backend": "searxng", "searxng": {"url": server.base}, "max_results": 3}}
    )
    env = await asyncio.wait_for(
        dispatch_tool(web_registry(settings), "web_search", {"query": "q"}, ctx), BOUND_S
    )
    results = ok(env)["results"]
    assert len(results) == 3 and len(json.dumps(results)) < 10_000
    assert len(results[0]["title"]) == 500 and results[1]["title"] == "t2"


async def test_search_answer_nested_too_deep_is_an_error(web_registry, ctx, serve, send) -> None:
    # deep past the parser's recursion, yet fewer values than MAX_RESPONSE_VALUES (200,000 arrays
    # are refused before parsing, by their count: test_web_search_json_bound.py)
    deep = b"[" * 100_000 + b"]" * 100_000
    server = serve(lambda port: {"/search": lambda h: send(h, 200, deep, "application/json")})
    settings = WebSettings.model_validate({"search": {"backend": "searxng", "searxng": {"url": server.base}}})
    env = await dispatch_tool(web_registry(settings), "web_search", {"query": "q"}, ctx)
    assert env["status"] == "error" and "did not answer with JSON" in env["error"]["message"]
