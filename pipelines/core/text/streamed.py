"""An answer streamed again after part of it was shown: only what goes beyond that part is new.

Used where a streamed answer is asked for a second time: a resumed run's journal (the part
stored before the crash) and a call asked again of a model server started again mid-answer
(the part shown before the connection broke). At temperature 0 the second answer starts as the
first did; where it does not, it is kept whole (the finished turn carries the true text).
"""

from __future__ import annotations


class StreamedAgain:
    """Feed the chunks of the answer asked again; ``unseen`` says what of each has not been shown."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self._pos = 0

    def unseen(self, chunk: str) -> str | None:
        """The part of ``chunk`` not shown before (all of it past the shown part), or None when all of it was."""
        remaining = self.shown[self._pos :]
        if not remaining:
            return chunk
        if remaining.startswith(chunk):
            self._pos += len(chunk)
            return None
        self._pos = len(self.shown)
        if chunk.startswith(remaining):
            return chunk[len(remaining) :]
        return chunk  # the new answer differs from the one shown: keep it whole
