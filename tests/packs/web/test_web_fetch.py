"""web_fetch against real HTTP servers on 127.0.0.1 (allowlisted), through the real dispatcher."""

from __future__ import annotations

import pytest
from reyn_tools_web.settings import WebSettings

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, render_router


def settings(**fetch: object) -> WebSettings:
    base: dict[str, object] = {"enabled": True, "allow_hosts": ["127.0.0.1"], "timeout_s": 5}
    base.update(fetch)
    return WebSettings.model_validate({"fetch": base})


async def fetch(
    web_registry, ctx: ToolContext, url: str, s: WebSettings | None = None, **args: object
) -> dict:
    return await dispatch_tool(web_registry(s or settings()), "web_fetch", {"url": url, **args}, ctx)


def error_of(envelope: dict) -> tuple[str, str]:
    assert envelope["status"] == "error", envelope
    return envelope["error"]["kind"], envelope["error"]["message"]


# ---------------------------------------------------------------- opt-in


async def test_web_fetch_is_unavailable_until_enabled(web_registry, ctx: ToolContext) -> None:
    reg = web_registry(WebSettings())
    assert "web_fetch" not in [t["function"]["name"] for t in render_router(reg, ctx)]
    kind, message = error_of(await dispatch_tool(reg, "web_fetch", {"url": "https://example.org"}, ctx))
    assert kind == "gate_refused"
    assert "enabled = true" in message


async def test_web_fetch_is_listed_when_enabled(web_registry, ctx: ToolContext) -> None:
    names = [t["function"]["name"] for t in render_router(web_registry(settings()), ctx)]
    assert "web_fetch" in names


# ---------------------------------------------------------------- pages and types


async def test_html_page_becomes_text_with_title_and_links(web_registry, ctx, http_server) -> None:
    env = await fetch(web_registry, ctx, f"{http_server.base}/page")
    assert env["status"] == "ok", env
    data = env["data"]
    assert data["title"] == "Test Page"
    assert (
        "# Hello" in data["text"]
        and "- one" in data["text"]
        and "First para with a text link." in data["text"]
    )
    assert "do-not-show" not in data["text"] and "color:red" not in data["text"]
    assert "hidden-noscript" not in data["text"]
    urls = [link["url"] for link in data["links"]]
    assert urls == [f"{http_server.base}/text", "https://example.org/x"]  # javascript: dropped
    assert data["content_type"] == "text/html" and data["status"] == 200


async def test_request_carries_host_header_and_identity_encoding(web_registry, ctx, http_server) -> None:
    await fetch(web_registry, ctx, f"{http_server.base}/text")
    headers = {k.lower(): v for k, v in http_server.seen[-1]["headers"].items()}
    assert headers["host"] == f"127.0.0.1:{http_server.port}"
    assert headers["accept-encoding"] == "identity"


async def test_plain_text_and_json_are_returned(web_registry, ctx, http_server) -> None:
    text = (await fetch(web_registry, ctx, f"{http_server.base}/text"))["data"]
    assert text["text"] == "plain  text\n\nsecond line"
    data = (await fetch(web_registry, ctx, f"{http_server.base}/json"))["data"]
    assert data["text"] == '{"a": 1}'


async def test_declared_charset_is_honoured(web_registry, ctx, http_server) -> None:
    data = (await fetch(web_registry, ctx, f"{http_server.base}/latin1"))["data"]
    assert data["text"] == "caf\u00e9"


@pytest.mark.parametrize("path", ["/image", "/no-type"])
async def test_wrong_content_type_is_refused(web_registry, ctx, http_server, path: str) -> None:
    kind, message = error_of(await fetch(web_registry, ctx, f"{http_server.base}{path}"))
    assert kind == "execution_error"
    assert "is not fetched as text" in message and "text/html" in message


async def test_http_error_status_is_reported(web_registry, ctx, http_server) -> None:
    kind, message = error_of(await fetch(web_registry, ctx, f"{http_server.base}/missing"))
    assert kind == "execution_error" and "HTTP 404" in message


# ---------------------------------------------------------------- window


async def test_window_reads_a_long_page_in_parts(web_registry, ctx, http_server) -> None:
    first = (await fetch(web_registry, ctx, f"{http_server.base}/long", max_length=4000))["data"]
    assert len(first["text"]) == 4000 and first["truncated"] and first["next_start_index"] == 4000
    assert first["total_length"] == 10000
    last = (await fetch(web_registry, ctx, f"{http_server.base}/long", max_length=8000, start_index=8000))[
        "data"
    ]
    assert len(last["text"]) == 2000 and not last["truncated"] and last["next_start_index"] is None


async def test_start_index_past_the_end_is_invalid(web_registry, ctx, http_server) -> None:
    env = await fetch(web_registry, ctx, f"{http_server.base}/long", start_index=99999)
    kind, message = error_of(env)
    assert kind == "invalid_arguments" and "past the end" in message
    assert env["error"]["errors"][0]["path"] == "/start_index"


@pytest.mark.parametrize("args", [{"max_length": 0}, {"start_index": -1}, {"url": 5}, {"bogus": 1}])
async def test_bad_arguments_are_rejected_by_schema(web_registry, ctx, args: dict) -> None:
    call = {"url": "http://127.0.0.1/", **args}
    env = await dispatch_tool(web_registry(settings()), "web_fetch", call, ctx)
    assert error_of(env)[0] == "invalid_arguments"


# ---------------------------------------------------------------- redirects


async def test_relative_and_absolute_redirects_are_followed(web_registry, ctx, http_server) -> None:
    data = (await fetch(web_registry, ctx, f"{http_server.base}/redirect"))["data"]
    assert data["final_url"] == f"{http_server.base}/page" and data["title"] == "Test Page"
    assert data["redirects"] == [f"{http_server.base}/redirect"]
    data = (await fetch(web_registry, ctx, f"{http_server.base}/redirect-abs"))["data"]
    assert data["final_url"] == f"{http_server.base}/text"


@pytest.mark.parametrize(
    "path", ["/redirect-to-loopback2", "/redirect-to-ipv6-loopback", "/redirect-to-decimal"]
)
async def test_redirect_from_allowlisted_host_to_forbidden_address_is_refused(
    web_registry, ctx, http_server, path: str
) -> None:
    kind, message = error_of(await fetch(web_registry, ctx, f"{http_server.base}{path}"))
    assert kind == "denied"
    assert "reached by redirect from" in message
    assert [s["path"] for s in http_server.seen] == [path]  # the forbidden hop was never requested


async def test_redirect_to_a_non_http_scheme_is_refused(web_registry, ctx, http_server) -> None:
    kind, message = error_of(await fetch(web_registry, ctx, f"{http_server.base}/redirect-to-file"))
    assert kind == "denied" and "'file'" in message


async def test_redirect_loop_stops_at_the_hop_limit(web_registry, ctx, http_server) -> None:
    kind, message = error_of(
        await fetch(web_registry, ctx, f"{http_server.base}/redirect-loop", settings(max_redirects=3))
    )
    assert kind == "execution_error" and "max_redirects=3" in message
    assert len(http_server.seen) == 4


async def test_redirect_without_location_is_an_error(web_registry, ctx, http_server) -> None:
    _kind, message = error_of(await fetch(web_registry, ctx, f"{http_server.base}/redirect-no-location"))
    assert "no Location" in message


# ---------------------------------------------------------------- refused URLs


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/x",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "javascript:alert(1)",
        "http://user:pw@127.0.0.1/",
        "http:///nohost",
        "not a url",
        "http://[::1/",
    ],
)
async def test_hostile_or_malformed_urls_are_denied(web_registry, ctx, url: str) -> None:
    assert error_of(await fetch(web_registry, ctx, url))[0] == "denied"


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f.1", "127.1", "017700000001", "[::ffff:127.0.0.1]", "localhost"]
)
async def test_loopback_spellings_are_denied_without_the_allowlist(
    web_registry, ctx, http_server, host
) -> None:
    env = await fetch(web_registry, ctx, f"http://{host}:{http_server.port}/page", settings(allow_hosts=[]))
    kind, message = error_of(env)
    assert kind == "denied" and "loopback" in message
    assert http_server.seen == []


# ---------------------------------------------------------------- limits


async def test_gzip_bomb_stops_at_the_byte_cap(web_registry, ctx, http_server) -> None:
    kind, message = error_of(
        await fetch(web_registry, ctx, f"{http_server.base}/gzip-bomb", settings(max_bytes=1_000_000))
    )
    assert kind == "execution_error" and "max_bytes=1000000" in message


async def test_small_gzip_body_is_decoded(web_registry, ctx, http_server) -> None:
    data = (await fetch(web_registry, ctx, f"{http_server.base}/gzip-small"))["data"]
    assert data["text"] == "small gzipped text"


async def test_unknown_content_encoding_is_refused(web_registry, ctx, http_server) -> None:
    assert "cannot decode" in error_of(await fetch(web_registry, ctx, f"{http_server.base}/brotli"))[1]


@pytest.mark.parametrize("path", ["/huge-declared", "/huge-streamed"])
async def test_huge_body_is_refused_at_the_cap(web_registry, ctx, http_server, path: str) -> None:
    kind, message = error_of(
        await fetch(web_registry, ctx, f"{http_server.base}{path}", settings(max_bytes=100_000))
    )
    assert kind == "execution_error" and "larger than max_bytes=100000" in message


async def test_slow_server_times_out(web_registry, ctx, http_server) -> None:
    kind, message = error_of(
        await fetch(web_registry, ctx, f"{http_server.base}/slow", settings(timeout_s=1))
    )
    assert kind == "timeout" and "1 s" in message


async def test_other_tools_keep_working_after_failures(web_registry, ctx, http_server) -> None:
    reg = web_registry(settings(max_bytes=100_000))
    await dispatch_tool(reg, "web_fetch", {"url": f"{http_server.base}/huge-streamed"}, ctx)
    await dispatch_tool(reg, "web_fetch", {"url": "file:///etc/passwd"}, ctx)
    ok = await dispatch_tool(reg, "web_fetch", {"url": f"{http_server.base}/text"}, ctx)
    assert ok["status"] == "ok"


def test_bad_allowlist_entry_is_a_settings_error() -> None:
    with pytest.raises(ValueError, match="neither a host name"):
        WebSettings.model_validate({"fetch": {"allow_hosts": ["http://x/"]}})


def test_unknown_settings_key_is_an_error() -> None:
    with pytest.raises(ValueError, match="extra"):
        WebSettings.model_validate({"fetch": {"enable": True}})
