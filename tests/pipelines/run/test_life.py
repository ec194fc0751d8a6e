"""A run's emit pipeline on its own, without a run: redacted as a stream, a resumed run's stored events let through
once, each stored then delivered, and a store gone too long stopping the run only between two pieces of work."""

from __future__ import annotations

from typing import Any, cast

import pytest

from pipelines.core.domain import Turn
from pipelines.core.errors import StoreUnavailableError
from pipelines.core.events import ArgumentDelta, Event, ModelCallCompleted, StageCompleted, StageStarted, TurnCompleted
from pipelines.record.event_writer import EventWriter, StorePaused
from pipelines.record.redaction import Redactor
from pipelines.run.life import EmitPipeline

KEY = "sk-live-0123456789abcdef"


class Writer:
    """What the pipeline asks of the event writer: take an event; say whether the store stayed away too long."""

    def __init__(self) -> None:
        self.stored: list[Event] = []
        self.down: StoreUnavailableError | None = None

    def put(self, evt: Event) -> None:
        self.stored.append(evt)


def pipeline(recorded: tuple[Event, ...] = ()) -> tuple[EmitPipeline, Writer, list[Event]]:
    writer, delivered = Writer(), []
    made = EmitPipeline(Redactor([KEY]), recorded=recorded, writer=cast(EventWriter, writer), deliver=delivered.append)
    return made, writer, delivered


def _text(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, ArgumentDelta))


def test_a_key_split_across_streamed_chunks_is_redacted_before_it_is_stored_or_shown() -> None:
    emit, writer, delivered = pipeline()
    turn = Turn(id="t1", agent="Pro", round=1, text=f"my key is {KEY} ok")
    for chunk in ("my key is ", KEY[:9], KEY[9:], " ok"):
        emit.step(ArgumentDelta(turn_id="t1", agent="Pro", round=1, text=chunk))
    emit.step(TurnCompleted(turn=turn))
    assert delivered == writer.stored, "what the page sees is what was stored, in the same order"
    assert KEY not in _text(delivered) and "[redacted]" in _text(delivered)
    done = delivered[-1]
    assert isinstance(done, TurnCompleted) and KEY not in done.turn.text


def test_what_a_resumed_run_stored_already_goes_through_once() -> None:
    before = (StageStarted(stage="queries", detail="writing 1 query"),)
    emit, writer, delivered = pipeline(recorded=before)
    emit.step(StageStarted(stage="queries", detail="writing 1 query"))  # replayed: stored before the resume
    emit.step(StageCompleted(stage="queries"))
    assert [type(e).__name__ for e in writer.stored] == ["StageCompleted"] and delivered == writer.stored


def test_flush_lets_out_what_the_stream_held_back() -> None:
    emit, _, delivered = pipeline()
    emit.step(ArgumentDelta(turn_id="t1", agent="Pro", round=1, text="cut short before the turn ended"))
    held = _text(delivered)
    emit.flush()
    assert held != _text(delivered) == "cut short before the turn ended"


@pytest.mark.parametrize(
    ("event", "stops"),
    [
        (ArgumentDelta(turn_id="t1", agent="Pro", round=1, text="more"), False),  # a streamed chunk: its answer's journal entry is to come
        (ModelCallCompleted(role="debater", model="fake", tokens_in=1, tokens_out=1, seconds=0.1), False),
        (StageCompleted(stage="queries"), True),  # a piece of work done: the run stops here, its event kept
    ],
)
def test_a_store_gone_too_long_stops_the_run_only_after_a_piece_of_work(event: Any, stops: bool) -> None:
    emit, writer, _ = pipeline()
    writer.down = StoreUnavailableError("the run store is away")
    if stops:
        with pytest.raises(StorePaused):
            emit.step(event)
    else:
        emit.step(event)
    emit.emit(StageCompleted(stage="after"))  # the runner's own last events never raise
    assert writer.stored and isinstance(writer.stored[-1], StageCompleted)
