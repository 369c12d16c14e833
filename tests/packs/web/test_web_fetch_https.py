"""https through the pinned-address connection: the request goes to the checked IP, while the TLS
SNI and the certificate check use the URL's host name (httpcore's ``sni_hostname`` extension)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from local_server import QuietHandler
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=reyn test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=d,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=localhost",
        cwd=d,
    )
    (d / "ext.cnf").write_text("subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        cwd=d,
    )
    return d


class _Handler(QuietHandler):
    hosts: list[str] = []

    def do_GET(self) -> None:
        type(self).hosts.append(self.headers.get("Host", ""))
        self.reply(200, b"over tls")


@pytest.fixture
def tls_server(pki: Path) -> Iterator[tuple[int, list[str], list[str]]]:
    sni_seen: list[str] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "leaf.pem", pki / "leaf.key")
    context.sni_callback = lambda sock, name, ctx: sni_seen.append(name or "")
    handler = type("H", (_Handler,), {"hosts": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd.server_address[1], sni_seen, handler.hosts
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def _settings(pki: Path, allow: list[str]) -> WebSettings:
    return WebSettings.model_validate(
        {"fetch": {"enabled": True, "allow_hosts": allow, "timeout_s": 5, "ca_bundle": str(pki / "ca.pem")}}
    )


async def test_https_uses_sni_and_verifies_the_host_name(web_registry, ctx, pki, tls_server) -> None:
    port, sni_seen, hosts = tls_server
    env = await dispatch_tool(
        web_registry(_settings(pki, ["localhost"])), "web_fetch", {"url": f"https://localhost:{port}/x"}, ctx
    )
    assert env["status"] == "ok", env
    assert env["data"]["text"] == "over tls"
    assert sni_seen == ["localhost"]
    assert hosts == [f"localhost:{port}"]


async def test_https_certificate_for_another_name_is_rejected(web_registry, ctx, pki, tls_server) -> None:
    port, _, hosts = tls_server
    env = await dispatch_tool(
        web_registry(_settings(pki, ["127.0.0.1"])), "web_fetch", {"url": f"https://127.0.0.1:{port}/x"}, ctx
    )
    assert env["status"] == "error" and env["error"]["kind"] == "execution_error"
    assert "certificate" in env["error"]["message"].lower() or "cannot connect" in env["error"]["message"]
    assert hosts == []
