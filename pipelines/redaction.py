"""Secrets kept out of everything a run leaves behind: streamed chunks, events, the journal, logs, exports.

Two leaks this closes: a key split across two streamed chunks (each chunk alone holds no
secret, so redacting event by event let both halves through: ``StreamRedactor`` holds back the
end of each stream until it can no longer be the start of a key), and credentials written into
an endpoint's base URL (user info, ``api-key``/``key``/``token`` query parameters), which
``scrub_url`` removes before a URL is stored, shown or exported, and ``url_secrets`` hands to
the redactor in case an error message echoes the URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from pipelines.events import ArgumentDelta, Event, RunFailed, RunInterrupted, TurnCompleted, VerdictReached, dump_event, parse_event

# Query parameters that carry credentials (Azure's api-key, Google's key, token, signatures...).
SENSITIVE_PARAM = re.compile(
    r"^(api[-_]?key|apikey|key|token|access[-_]?token|auth|authorization|password|passwd|pwd|secret|client[-_]?secret|sig|signature|x-api-key)$",
    re.IGNORECASE,
)
SCRUBBED = "redacted"
_RUN_ENDS = (VerdictReached, RunFailed, RunInterrupted)


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


class Redactor:
    """Replaces API keys in events and log text with a marker, whatever put them there (an echoed error, a model)."""

    MARK = "[redacted]"

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = [s for s in secrets if s]

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, self.MARK)
        return value

    def event(self, evt: Event) -> Event:
        if not self.secrets:
            return evt
        raw = json.dumps(dump_event(evt))
        if not any(s in raw for s in self.secrets):
            return evt
        return parse_event(json.loads(self.text(raw)))


class StreamRedactor:
    """Redacts a run's events as one stream: a secret split across streamed chunks is caught whole.

    Each turn's streamed text is held back by one character less than the longest secret (a
    held-back end could still be the first part of a key); the rest goes out redacted. What is
    held back goes out when its turn completes or the run ends (``flush``). Whole events are
    redacted by ``redact_event``.
    """

    def __init__(self, secrets: Sequence[str], redact_text: Callable[[str], str], redact_event: Callable[[Event], Event]) -> None:
        self._window = max((len(s) for s in secrets if s), default=0) - 1
        self._text = redact_text
        self._event = redact_event
        self._held: dict[str, ArgumentDelta] = {}

    def feed(self, evt: Event) -> list[Event]:
        """The events to pass on for ``evt``, in order (none while a chunk is held back whole)."""
        if self._window < 1:
            return [self._event(evt)]
        if isinstance(evt, ArgumentDelta):
            held = self._held.pop(evt.turn_id, None)
            text = self._text((held.text if held is not None else "") + evt.text)
            cut = max(len(text) - self._window, 0)
            if cut < len(text):
                self._held[evt.turn_id] = evt.model_copy(update={"text": text[cut:]})
            return [evt.model_copy(update={"text": text[:cut]})] if cut else []
        if isinstance(evt, TurnCompleted):
            return [*self._release(evt.turn.id), self._event(evt)]
        if isinstance(evt, _RUN_ENDS):
            return [*self.flush(), self._event(evt)]
        return [self._event(evt)]  # other agents' events do not end this stream (gathered turns interleave)

    def flush(self) -> list[Event]:
        """Every held-back end, redacted (the streams are over: what is held cannot grow into a secret any more)."""
        return [e for turn_id in list(self._held) for e in self._release(turn_id)]

    def _release(self, turn_id: str) -> list[Event]:
        held = self._held.pop(turn_id, None)
        return [held.model_copy(update={"text": self._text(held.text)})] if held is not None and held.text else []


__all__ = ["SENSITIVE_PARAM", "Redactor", "StreamRedactor", "scrub_url", "url_secrets"]
