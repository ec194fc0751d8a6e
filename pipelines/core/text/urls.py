"""Credentials kept out of an endpoint's URL: ``scrub_url`` before a URL is stored, shown or exported; ``url_secrets`` for the redactor."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

# Query parameters that carry credentials (Azure's api-key, Google's key, token, signatures...).
SENSITIVE_PARAM = re.compile(
    r"^(api[-_]?key|apikey|key|token|access[-_]?token|auth|authorization|password|passwd|pwd|secret|client[-_]?secret|sig|signature|x-api-key)$",
    re.IGNORECASE,
)
SCRUBBED = "redacted"


def scrub_url(url: str) -> str:
    """``url`` without user info and with credential query parameters' values replaced by ``redacted``."""
    if not url or ("@" not in url and "=" not in url):
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(an unreadable URL, not shown)"
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port else "")
    query = urlencode([(k, SCRUBBED if SENSITIVE_PARAM.match(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The credentials written into ``url`` (user, password, credential parameters), raw and URL-encoded."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.username or "", parts.password or ""]
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if SENSITIVE_PARAM.match(k)]
    found = [unquote(s) for s in found if s]
    return sorted({v for s in found for v in (s, quote(s, safe="")) if len(v) >= 4}, key=len, reverse=True)
