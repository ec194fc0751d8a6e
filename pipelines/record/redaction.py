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
from collections.abc import Callable, Sequence

from pipelines.core.events import ArgumentDelta, Event, RunFailed, RunInterrupted, TurnCompleted, VerdictReached, dump_event, parse_event

_RUN_ENDS = (VerdictReached, RunFailed, RunInterrupted)


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


__all__ = ["Redactor", "StreamRedactor"]
