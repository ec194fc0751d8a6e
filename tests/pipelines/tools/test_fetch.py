"""Pasted URLs: only public addresses are fetched (checked after DNS), bounded in size and time, HTML becomes text."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipelines.core.text.addresses import Address, citable_host, public_only
from pipelines.core.text.safety import public_http_url
from pipelines.run.tools.fetch import FetchError, fetch_page, html_to_text

PAGE = b"""<html><head><title>Masks &amp; trials</title><script>alert('x')</script><style>p{}</style></head>
<body><nav>Home | About</nav><h1>Masks study</h1><p>Randomized trials found masks reduce transmission.</p>
<p>Second <b>paragraph</b>.</p><script>track()</script></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/page":
            self._send(200, "text/html; charset=utf-8", PAGE)
        elif self.path == "/big":
            self._send(200, "text/plain", b"masks " * 200_000)
        elif self.path == "/slow":
            time.sleep(2)
            self._send(200, "text/plain", b"late")
        elif self.path == "/redirect-away":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{self.server.server_address[1]}/page")
            self.end_headers()
        elif self.path in ("/drip", "/drip-headers"):
            self._drip()
        elif self.path == "/pdf":
            self._send(200, "application/pdf", b"%PDF-1.4")
        else:
            self._send(404, "text/plain", b"no")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _drip(self) -> None:
        # One byte every 0.2 s: each wait for bytes is short, the whole page takes 4 s (headers too on /drip-headers).
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\n"
        try:
            if self.path == "/drip-headers":
                for byte in head:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.2)
            else:
                self.wfile.write(head)
            for _ in range(20):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass  # the fetcher hung up at its deadline, as it should

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def only_127_0_0_1(address: Address) -> str | None:
    """The test server is on loopback: let 127.0.0.1 through, nothing else that is not public."""
    return None if str(address) == "127.0.0.1" else public_only(address)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:9/", "loopback"),
        ("http://localhost/", "loopback|private network"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.1.1/admin", "private"),
        ("http://0.0.0.0/", "unspecified"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://example.org/x", "only http:// and https://"),
        ("http://user:pw@example.org/", "user name or password"),
        ("http://[2002:7f00:1::1]/", "6to4 address embedding 127.0.0.1"),
        ("http://[2002:a00:1::1]/", "6to4 address embedding 10.0.0.1"),
        ("http://[2002:a9fe:a9fe::1]/", "6to4 address embedding 169.254.169.254"),
        ("http://[2001:0:c0a8:101::1]/", "Teredo address embedding 192.168.1.1|private"),
        ("http://[fec0::1]/", "site-local"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
    ],
)
def test_non_public_addresses_and_other_schemes_are_refused(url: str, why: str) -> None:
    with pytest.raises(FetchError, match=why):
        fetch_page(url)


def test_a_name_that_resolves_to_a_private_address_is_refused_after_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_dns(host: str, port: int, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.7", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    with pytest.raises(FetchError, match=r"refused: rebind.example resolves to 10\.0\.0\.7, a private network address"):
        fetch_page("http://rebind.example/")


def test_public_only_accepts_a_public_address() -> None:
    assert public_only(ipaddress.ip_address("93.184.216.34")) is None
    assert public_only(ipaddress.ip_address("2606:4700::1111")) is None
    assert public_only(ipaddress.ip_address("100.64.0.1")) is not None  # carrier-grade NAT is not public either


def test_html_becomes_text_without_scripts_styles_or_navigation(server: str) -> None:
    page = fetch_page(server + "/page", policy=only_127_0_0_1)
    assert page.title == "Masks & trials"
    assert "Randomized trials found masks reduce transmission." in page.text and "Second paragraph." in page.text
    assert "alert" not in page.text and "track()" not in page.text and "Home | About" not in page.text and "p{}" not in page.text


def test_size_and_time_are_limited(server: str) -> None:
    page = fetch_page(server + "/big", policy=only_127_0_0_1, max_bytes=10_000)
    assert page.truncated and len(page.text) <= 10_000
    with pytest.raises(FetchError, match="did not answer in time|took longer"):
        fetch_page(server + "/slow", policy=only_127_0_0_1, timeout_s=0.5)


@pytest.mark.parametrize("path", ["/drip", "/drip-headers"])
def test_a_server_dripping_bytes_cannot_stretch_the_time_limit(server: str, path: str) -> None:
    started = time.monotonic()
    with pytest.raises(FetchError, match="took longer than the limit|did not answer in time"):
        fetch_page(server + path, policy=only_127_0_0_1, timeout_s=1.0)
    assert time.monotonic() - started < 1.8  # the page takes 4 s or more to drip in


def test_public_6to4_addresses_are_still_fetched() -> None:
    assert public_only(ipaddress.ip_address("2002:808:808::1")) is None  # 6to4 of 8.8.8.8


def test_a_redirect_to_a_refused_address_is_refused(server: str) -> None:
    with pytest.raises(FetchError, match="127.0.0.2, a loopback address"):
        fetch_page(server + "/redirect-away", policy=only_127_0_0_1)


def test_binary_and_missing_pages_get_clear_messages(server: str) -> None:
    with pytest.raises(FetchError, match="application/pdf, not a text or HTML page"):
        fetch_page(server + "/pdf", policy=only_127_0_0_1)
    with pytest.raises(FetchError, match="answered 404"):
        fetch_page(server + "/missing", policy=only_127_0_0_1)


def test_html_to_text_keeps_paragraphs_apart() -> None:
    title, text = html_to_text("<title>T</title><p>one</p><p>two</p>")
    assert title == "T" and "one" in text and "two" in text and "onetwo" not in text


@pytest.mark.parametrize("address", ["3fff::1", "3fff:fff::1", "5f00::1", "64:ff9b:1::a00:1"])
def test_ranges_python_still_calls_global_are_refused(address: str) -> None:
    assert public_only(ipaddress.ip_address(address)) is not None  # 3fff::/20 is for documentation (RFC 9637)


@pytest.mark.parametrize(
    "host", ["127.0.0.1.nip.io", "app-10-0-0-1.sslip.io", "7f000001.nip.io", "a.192.168.1.9.xip.io", "localtest.me", "x.lvh.me"]
)
def test_names_that_answer_with_a_private_address_written_in_them_are_never_cited_or_fetched(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert citable_host(host) is not None and not public_http_url(f"https://{host}/report")
    looked_up: list[str] = []
    monkeypatch.setattr(socket, "getaddrinfo", lambda name, *a, **k: looked_up.append(name) or [])
    with pytest.raises(FetchError, match="refused"):
        fetch_page(f"http://{host}/")
    assert looked_up == [], "refused before any look-up, whatever a resolver would answer"


@pytest.mark.parametrize("host", ["1.2.3.4.nip.io", "www.who.int", "deadbeef.example.com", "2020.12.31.example.com"])
def test_public_names_and_names_with_public_addresses_in_them_are_still_citable(host: str) -> None:
    assert citable_host(host) is None
