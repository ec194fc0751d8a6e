"""The desk's settings live in the run store: editors change them, each change is audited, every run and resume obeys them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from pipelines.core.config import BudgetConfig, ConfigError, load_run_config
from pipelines.core.events import Event, ModelCallCompleted, RunInterrupted, RunStarted, VerdictReached
from pipelines.newsroom.access.users import User
from pipelines.record.store import RunStore
from pipelines.run.desk_settings import (
    DeskSettings,
    DeskSettingsBook,
    DeskSettingsRefusedError,
    Endpoint,
    limits_on_resume,
    masked,
    within_desk,
)
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import resume_run, stream_run
from pipelines.run.services import Services
from tests.fakes import fake_config, with_settings

CLAIM = "Masks reduce transmission of respiratory viruses"
EDITOR = User(username="ed", name="Ed Editor", role="editor")
CHECKER = User(username="cat", name="Cat Checker", role="checker")


def book_of(services: Services) -> DeskSettingsBook:
    book = services.desk_book()
    assert book is not None
    return book


def desk_with(services: Services, **limits: object) -> DeskSettings:
    current = services.desk_settings()
    return current.model_copy(update={"budget": current.budget.model_copy(update=limits)})


def calls(events: list[Event]) -> list[ModelCallCompleted]:
    return [e for e in events if isinstance(e, ModelCallCompleted) and not e.cached]


def test_a_checker_cannot_change_the_desks_settings_an_editor_can_and_each_change_is_audited(fresh: Services) -> None:
    book = book_of(fresh)
    with pytest.raises(
        DeskSettingsRefusedError, match="only an editor may change the desk's settings; Cat Checker is signed in as a checker"
    ):
        book.save(desk_with(fresh, max_calls=5), user=CHECKER, sign_in=True)
    with pytest.raises(DeskSettingsRefusedError, match="nobody is signed in"):
        book.save(desk_with(fresh, max_calls=5), user=None, sign_in=True)
    assert book.load().budget.max_calls == 0 and book.changes() == []

    changes = book.save(desk_with(fresh, max_calls=40, max_cost=2.0, prices=["fake=0.5"], default_price=0.001), user=EDITOR, sign_in=True)
    assert {(c.setting, c.before, c.after, c.by) for c in changes} == {
        ("budget.max_calls", "0", "40", "Ed Editor"),
        ("budget.max_cost", "0", "2", "Ed Editor"),
        ("budget.prices", "(none)", "fake=0.5", "Ed Editor"),
        ("budget.default_price", "0", "0.001", "Ed Editor"),
    }
    # Read back by another process (a new book over the same database): the change holds.
    again = DeskSettingsBook(RunStore(fresh.store.url), fresh.settings.data_dir)  # type: ignore[union-attr]
    assert again.load().budget.max_calls == 40 and again.load().changed_by == "Ed Editor"
    assert len(again.changes()) == 4

    # Nobody signed in (a one-person desk): the person at the machine may change them, under the name they gave.
    solo = book.save(desk_with(fresh, max_calls=30), user=None, sign_in=False, name="Sam")
    assert [(c.setting, c.before, c.after, c.by) for c in solo] == [("budget.max_calls", "40", "30", "Sam")]


def test_a_stale_page_cannot_undo_another_editors_change(fresh: Services) -> None:
    book = book_of(fresh)
    seen = book.load()
    book.save(desk_with(fresh, max_calls=10), user=EDITOR, sign_in=True, expected_version=seen.version)
    with pytest.raises(DeskSettingsRefusedError, match="Ed Editor changed the desk's settings after this page showed them"):
        book.save(desk_with(fresh, max_calls=99), user=EDITOR, sign_in=True, expected_version=seen.version)
    assert book.load().budget.max_calls == 10


@pytest.mark.parametrize("saved_before", [False, True], ids=["first-save", "later-save"])
def test_two_editors_saving_at_once_one_wins_and_the_other_is_told(
    fresh: Services, monkeypatch: pytest.MonkeyPatch, saved_before: bool
) -> None:
    """Both pages read the same version, then both press Save: SQLite let both through (its read was outside the write lock)."""
    import contextlib
    import threading

    book = book_of(fresh)
    if saved_before:
        book.save(desk_with(fresh, max_calls=10), user=EDITOR, sign_in=True)
    both_read = threading.Barrier(2)
    load = DeskSettingsBook.load

    def load_then_wait(self: DeskSettingsBook) -> DeskSettings:
        seen = load(self)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_read.wait(timeout=2)  # each save has read the settings before either writes
        return seen

    monkeypatch.setattr(DeskSettingsBook, "load", load_then_wait)
    outcomes: dict[int, str] = {}

    def save(limit: int) -> None:
        try:
            book.save(desk_with(fresh, max_calls=limit), user=EDITOR, sign_in=True)
            outcomes[limit] = "saved"
        except DeskSettingsRefusedError as exc:
            outcomes[limit] = str(exc)

    savers = [threading.Thread(target=save, args=(limit,)) for limit in (41, 42)]
    for saver in savers:
        saver.start()
    for saver in savers:
        saver.join(timeout=30)
    monkeypatch.setattr(DeskSettingsBook, "load", load)
    assert sorted(outcomes.values()).count("saved") == 1, outcomes
    refused = next(text for text in outcomes.values() if text != "saved")
    assert "changed the desk's settings" in refused and "reload" in refused
    winner = next(limit for limit, text in outcomes.items() if text == "saved")
    assert book.load().budget.max_calls == winner
    assert next(c.after for c in book.changes() if c.setting == "budget.max_calls") == str(winner), "only the winner is audited"


def test_an_api_key_is_stored_encrypted_and_shown_only_by_its_last_four_characters(fresh: Services) -> None:
    book = book_of(fresh)
    key = "sk-test-0123456789abcdef"
    desk = fresh.desk_settings()
    endpoints = {
        **desk.endpoints,
        "judge": Endpoint(backend="openai", model="gpt-4o-mini", base_url="https://api.example", api_key=SecretStr(key)),
    }
    changes = book.save(desk.model_copy(update={"endpoints": endpoints}), user=EDITOR, sign_in=True)
    assert ("judge.api_key", "(none)", "…cdef") in {(c.setting, c.before, c.after) for c in changes}
    assert all(key not in f"{c.before} {c.after}" for c in changes)
    from sqlalchemy import text

    with fresh.store.engine.connect() as conn:  # type: ignore[union-attr]
        stored = " ".join(str(v) for row in conn.execute(text("SELECT * FROM desk_settings")) for v in row)
        audit = " ".join(str(v) for row in conn.execute(text("SELECT * FROM desk_settings_changes")) for v in row)
    assert key not in stored and key not in audit, "the key is never in the database in clear"
    loaded = book.load()
    assert loaded.endpoints["judge"].api_key.get_secret_value() == key
    # Saving again with a blank key keeps the stored one.
    blank = {**loaded.endpoints, "judge": loaded.endpoints["judge"].model_copy(update={"api_key": SecretStr("")})}
    assert book.save(loaded.model_copy(update={"endpoints": blank}), user=EDITOR, sign_in=True) == []
    assert book.load().endpoints["judge"].api_key.get_secret_value() == key
    assert masked(key) == "…cdef" and masked("short") == "(set)" and masked("") == "(none)"
    # Applied to a session's run: the desk's endpoint and key.
    applied = loaded.apply(fake_config())
    assert applied.judge.backend == "openai" and applied.judge.api_key.get_secret_value() == key


def test_a_run_may_lower_a_limit_for_itself_never_raise_it_past_the_desks(fresh: Services) -> None:
    desk = BudgetConfig(max_calls=40, max_tokens=0, batch_max_calls=100)
    mine = within_desk(BudgetConfig(max_calls=10, max_tokens=500, batch_max_calls=0), desk)
    assert (mine.max_calls, mine.max_tokens, mine.batch_max_calls) == (10, 500, 100)
    greedy = within_desk(BudgetConfig(max_calls=1000), desk)
    assert greedy.max_calls == 40

    book_of(fresh).save(desk_with(fresh, max_calls=3), user=EDITOR, sign_in=True)
    events = list(stream_run(CLAIM, with_settings(fake_config(protocol="desk"), "budget", max_calls=500), fresh))
    stop = events[-1]
    assert isinstance(stop, RunInterrupted) and stop.budget is not None and stop.budget.allowed == 3
    started = events[0]
    assert (
        isinstance(started, RunStarted) and started.config["budget"]["max_calls"] == 3 and started.config["desk_limits"]["max_calls"] == 3
    )


def test_a_stopped_run_holds_its_limits_on_resume_until_an_editor_raises_the_desks(fresh: Services) -> None:
    book = book_of(fresh)
    book.save(desk_with(fresh, max_calls=3), user=EDITOR, sign_in=True)
    events = list(stream_run(CLAIM, fake_config(protocol="desk"), fresh))
    run_id = events[0].run_id  # type: ignore[attr-defined]
    assert isinstance(events[-1], RunInterrupted)

    # A checker resuming (a session with no limits of its own, or one asking for more) changes nothing: no call is made.
    for asked in (None, BudgetConfig(max_calls=0), BudgetConfig(max_calls=1000)):
        model = FakeChatModel()
        fresh.chat_override = model
        again = list(resume_run(run_id, fresh, secrets_from=fake_config(), limits=asked).stream())
        assert model.calls == 0 and isinstance(again[-1], RunInterrupted), asked

    # The editor raises the desk's limit: the next resume, by anyone, goes on to the verdict.
    book.save(desk_with(fresh, max_calls=200), user=EDITOR, sign_in=True)
    fresh.chat_override = FakeChatModel()
    list(resume_run(run_id, fresh, secrets_from=fake_config()).stream())
    record = fresh.store.events(run_id)  # type: ignore[union-attr]
    assert isinstance(record[-1], VerdictReached)


def test_limits_on_resume_field_by_field() -> None:
    stored = BudgetConfig(max_calls=3, max_tokens=100)
    then = BudgetConfig(max_calls=3, max_tokens=1000)
    now = BudgetConfig(max_calls=50, max_tokens=2000)
    held = limits_on_resume(stored, then, now, None, may_raise=False)
    # calls: the run ran at the desk's limit, which an editor raised; tokens: the run had lowered it for itself.
    assert (held.max_calls, held.max_tokens) == (50, 100)
    lowered = limits_on_resume(stored, then, now, BudgetConfig(max_calls=2, max_tokens=0), may_raise=False)
    assert (lowered.max_calls, lowered.max_tokens) == (2, 100)
    raised = limits_on_resume(stored, then, now, BudgetConfig(max_calls=9999, max_tokens=500), may_raise=True)
    assert (raised.max_calls, raised.max_tokens) == (50, 500), "an editor raises, never past the desk's"
    tighter_desk = limits_on_resume(stored, then, BudgetConfig(max_calls=2, max_tokens=50), None, may_raise=False)
    assert (tighter_desk.max_calls, tighter_desk.max_tokens) == (2, 50), "a desk's limit lowered since holds too"
    old_run = limits_on_resume(stored, None, now, None, may_raise=False)
    assert (old_run.max_calls, old_run.max_tokens) == (3, 100), "a run stored before desk limits keeps its own"


def test_a_money_limit_for_a_model_with_no_price_is_refused_up_front(fresh: Services) -> None:
    unpriced = with_settings(fake_config(protocol="single"), "budget", max_cost=1.0)
    model = FakeChatModel()
    fresh.chat_override = model
    with pytest.raises(ConfigError, match="a money limit is set but fake has no price"):
        list(stream_run(CLAIM, unpriced, fresh))
    assert model.calls == 0
    with pytest.raises(DeskSettingsRefusedError, match="has no price"):
        book_of(fresh).save(desk_with(fresh, max_cost=1.0), user=EDITOR, sign_in=True)


def test_a_bad_limit_in_the_environment_names_the_variable_and_its_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBATEDESK_BUDGET__MAX_CALLS", "-3")
    monkeypatch.setenv("DEBATEDESK_BUDGET__MAX_COST", "lots")
    with pytest.raises(ConfigError) as caught:
        load_run_config()
    message = str(caught.value)
    assert "Calls per run (DEBATEDESK_BUDGET__MAX_CALLS) must be a whole number from 0 to 100,000; got '-3'" in message
    assert "Money per run (DEBATEDESK_BUDGET__MAX_COST) must be a number from 0 to 100,000; got 'lots'" in message
    assert "pydantic" not in message and "errors.pydantic.dev" not in message and "input_value" not in message


def test_the_cli_says_which_variable_is_wrong(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DEBATEDESK_BUDGET__BATCH_MAX_TOKENS", "many")
    from pipelines.cli.main import main

    assert main(["verify", CLAIM, "--backend", "fake"]) == 2
    err = capsys.readouterr().err
    assert "Tokens per batch (DEBATEDESK_BUDGET__BATCH_MAX_TOKENS) must be a whole number from 0 to 1,000,000,000" in err
    assert "validation error" not in err and "pydantic" not in err


def test_with_the_store_away_the_desks_settings_say_so_plainly_and_no_run_starts(fresh: Services, tmp_path: Path) -> None:
    from sqlalchemy import create_engine

    from pipelines.core.errors import DebateDeskError

    store = fresh.store
    assert store is not None
    store.engine = create_engine(f"sqlite:///{tmp_path / 'gone' / 'runs.sqlite'}")  # the database went away
    book = book_of(fresh)
    with pytest.raises(DebateDeskError, match="the desk's settings cannot be read from the run store"):
        book.load()
    with pytest.raises(DebateDeskError, match="run store .*nothing was changed"):  # said plainly, whichever read fails first
        list(stream_run(CLAIM, fake_config(protocol="single"), fresh))
    with pytest.raises(DebateDeskError, match="cannot be read"):
        book.save(DeskSettings(), user=EDITOR, sign_in=True)
