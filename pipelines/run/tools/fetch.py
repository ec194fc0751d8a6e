"""Fetch a web page a checker pasted as evidence: public addresses only, bounded in size and time, HTML to text.

The host is resolved first and every address it resolves to must be public (not private,
loopback, link-local, multicast, reserved or otherwise non-global); the connection then
goes to that checked address (so a second DNS answer cannot point it elsewhere), and each
redirect is checked the same way. Errors say what was refused and why.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from pipelines.core.errors import DebateDeskError
from pipelines.core.text.addresses import Address, citable_host, public_only

MAX_BYTES = 2 * 1024 * 1024
TIMEOUT_S = 10.0
MAX_REDIRECTS = 3
USER_AGENT = "DebateDesk/0.1 (fact-checking evidence fetcher)"

AddressPolicy = Callable[[Address], str | None]  # returns why an address is refused, or None


class FetchError(DebateDeskError):
    """A page could not be fetched, or was refused; the message says which and why."""


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    title: str
    text: str
    content_type: str
    truncated: bool


def resolve(host: str, port: int) -> list[Address]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host!r}: {exc.strerror or exc}. Check the address.") from None
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))


def fetch_page(
    url: str,
    *,
    max_bytes: int = MAX_BYTES,
    timeout_s: float = TIMEOUT_S,
    policy: AddressPolicy = public_only,
) -> FetchedPage:
    """Fetch ``url`` (http or https) and return its readable text; raises FetchError with a clear reason."""
    deadline = time.monotonic() + timeout_s
    current = url.strip()
    for _hop in range(MAX_REDIRECTS + 1):
        parts = urlsplit(current)
        if parts.scheme not in ("http", "https"):
            raise FetchError(f"only http:// and https:// pages can be fetched, not {parts.scheme or 'a bare'!r} URLs")
        if not parts.hostname:
            raise FetchError(f"{current!r} has no host name")
        if parts.username or parts.password:
            raise FetchError("URLs with a user name or password are not fetched")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if policy is public_only and (why := citable_host(parts.hostname)) is not None:  # before any look-up: 127.0.0.1.nip.io
            raise FetchError(f"refused: {parts.hostname} is {why}. Only public web pages can be fetched.")
        addresses = resolve(parts.hostname, port)
        if not addresses:
            raise FetchError(f"{parts.hostname!r} resolves to no address")
        for address in addresses:
            why = policy(address)
            if why is not None:
                raise FetchError(f"refused: {parts.hostname} resolves to {address}, {why}. Only public web pages can be fetched.")
        status, headers, body, truncated = _get(parts.scheme, parts.hostname, str(addresses[0]), port, _path(parts), deadline, max_bytes)
        if status in (301, 302, 303, 307, 308) and headers.get("location"):
            current = urljoin(current, headers["location"])
            continue
        if status >= 400:
            raise FetchError(f"the server answered {status} for {current}")
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        charset = _charset(headers.get("content-type", ""))
        raw = body.decode(charset, errors="replace")
        if content_type in ("text/html", "application/xhtml+xml") or (not content_type and "<html" in raw[:2000].lower()):
            title, text = html_to_text(raw)
        elif content_type.startswith("text/") or content_type in ("application/json", ""):
            title, text = "", raw
        else:
            raise FetchError(f"{current} is {content_type}, not a text or HTML page; paste its text instead")
        text = re.sub(r"[ \t\r\f\v]+", " ", text)
        text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
        if not text:
            raise FetchError(f"{current} has no readable text")
        return FetchedPage(url=current, title=title, text=text, content_type=content_type or "text/plain", truncated=truncated)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects from {url}")


def _path(parts: object) -> str:
    p = parts  # urlsplit result
    path = getattr(p, "path", "") or "/"
    query = getattr(p, "query", "")
    return path + (f"?{query}" if query else "")


def _charset(content_type: str) -> str:
    match = re.search(r"charset=([\w.-]+)", content_type, re.IGNORECASE)
    if match:
        try:
            "".encode(match.group(1))
            return match.group(1)
        except LookupError:
            pass
    return "utf-8"


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to an address checked beforehand, with the certificate checked against the host name."""

    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address
        self.raw_sock: socket.socket | None = None

    def connect(self) -> None:
        self.raw_sock = sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address
        self.raw_sock: socket.socket | None = None

    def connect(self) -> None:
        self.raw_sock = self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _Deadline:
    """Cuts the connection when the fetch's time is up, whatever it is waiting on.

    A socket timeout bounds one wait for bytes; a server sending a byte a second never trips
    it, and a read of a whole chunk (or a header line) would go on for as long as it drips.
    A timer that shuts the socket down bounds the connection, the headers and the body together.
    """

    def __init__(self, conn: _PinnedHTTPConnection | _PinnedHTTPSConnection, seconds: float) -> None:
        self._conn = conn
        self.expired = threading.Event()
        self._timer = threading.Timer(max(seconds, 0.0), self._cut)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def _cut(self) -> None:
        self.expired.set()
        sock = self._conn.raw_sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _get(
    scheme: str, host: str, address: str, port: int, path: str, deadline: float, max_bytes: int
) -> tuple[int, dict[str, str], bytes, bool]:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchError("the fetch took too long")
    cls = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    conn = cls(host, address, port, timeout=left)
    too_slow = FetchError(f"the page took longer than the limit to arrive; paste its text instead ({host})")
    with _Deadline(conn, left) as cut:
        try:
            conn.request("GET", path, headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/plain;q=0.9, */*;q=0.1", "Host": host})
            response = conn.getresponse()
            headers = {k.lower(): v for k, v in response.getheaders()}
            chunks: list[bytes] = []
            size = 0
            truncated = False
            while True:
                if cut.expired.is_set() or time.monotonic() > deadline:
                    raise too_slow
                chunk = response.read1(64 * 1024)  # what has arrived (read() would wait for a whole chunk, byte by dripped byte)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if size >= max_bytes:
                    truncated = True
                    break
            if cut.expired.is_set():  # the cut looks like the end of the page: it is not
                raise too_slow
            return response.status, headers, b"".join(chunks)[:max_bytes], truncated
        except TimeoutError:
            raise FetchError(f"{host} did not answer in time") from None
        except ssl.SSLError as exc:
            if cut.expired.is_set():
                raise too_slow from None
            raise FetchError(f"{host}: secure connection failed ({exc.reason or exc})") from None
        except (OSError, http.client.HTTPException) as exc:
            if cut.expired.is_set():
                raise too_slow from None
            raise FetchError(f"{host}: {exc}") from None
        finally:
            conn.close()


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page: scripts, styles and other non-content elements are dropped."""

    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "nav", "footer", "form"})
    BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "blockquote", "pre"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in self.SKIP:
            self._skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in self.SKIP and self._skip:
            self._skip -= 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(html: str) -> tuple[str, str]:
    """(title, visible text) of an HTML document."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return " ".join(parser.title.split()), "".join(parser.parts)
