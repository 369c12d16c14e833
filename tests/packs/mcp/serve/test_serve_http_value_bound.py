"""``reyn mcp serve --http`` bounds a request body by ``--max-request-values`` (issue 24, invariant
6): its JSON values are counted as it is read, before the SDK parses it (parsing costs per value, not
per byte); over the bound it is answered 413 naming the bound, logged, and the session keeps being
served. A body under the bound and a string of many commas (one value) are the positive controls. A
real ``reyn`` subprocess on 127.0.0.1, raw HTTP."""

from __future__ import annotations

import httpx

from .conftest import ServeWorld
from .test_serve_http_limits import _session, open_session

WORDS = "of over 1000 JSON values (--max-request-values)"


def _list(request_id: int, meta: object) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {"_meta": {"x": meta}}}


async def test_a_body_over_the_value_bound_is_refused_and_the_session_served(serve_world: ServeWorld) -> None:
    with serve_world.http("--max-request-values", "1000") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            headers = _session(sid)
            under = await http.post(server.url, json=_list(2, [1] * 500), headers=headers)
            commas = await http.post(server.url, json=_list(3, "," * 50_000), headers=headers)
            over = await http.post(server.url, json=_list(4, [{"a": 1}] * 2000), headers=headers)
            after = await http.post(server.url, json=_list(5, 1), headers=headers)
        log = server.log.read_text()
    assert under.status_code == 200 and "tools" in under.text, under.text  # the positive controls
    assert commas.status_code == 200 and "tools" in commas.text, commas.text
    assert over.status_code == 413, over.text
    assert WORDS in over.text
    assert after.status_code == 200 and "tools" in after.text, after.text
    assert f"a request body {WORDS} was refused unparsed" in log
