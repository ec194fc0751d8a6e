"""The hash chain: links over canonical JSON, where a list of events departs from the signed one, and the run store's own chain."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, text

from pipelines.core.domain import Verdict
from pipelines.core.events import RunStarted, StageStarted, VerdictOverridden, VerdictReached, dump_event
from pipelines.record import chain
from pipelines.record.store import RunStore
from tests.stores import store_url  # noqa: F401  (the fixture)

PAYLOADS = [{"type": "E", "n": i, "text": f"event {i} ü"} for i in range(6)]
SIGNED = [chain.event_digest(p) for p in PAYLOADS]


def test_canonical_json_ignores_key_order_and_spacing() -> None:
    assert chain.canonical({"b": 1, "a": [1.5, "é"]}) == chain.canonical({"a": [1.5, "é"], "b": 1}) == '{"a":[1.5,"é"],"b":1}'.encode()


def test_each_link_carries_the_one_before() -> None:
    links = chain.links(PAYLOADS)
    assert links[0] == chain.link(chain.GENESIS, SIGNED[0])
    assert all(links[i] == chain.link(links[i - 1], SIGNED[i]) for i in range(1, len(links)))
    assert chain.links_of_digests(SIGNED) == links
    changed = [*PAYLOADS[:2], {**PAYLOADS[2], "n": 99}, *PAYLOADS[3:]]
    assert chain.links(changed)[:2] == links[:2] and all(a != b for a, b in zip(chain.links(changed)[2:], links[2:], strict=True))


def test_the_same_events_compare_clean() -> None:
    assert chain.compare(SIGNED, PAYLOADS) == []


def test_a_changed_event_is_named_by_its_index() -> None:
    tampered = [*PAYLOADS[:3], {**PAYLOADS[3], "text": "REFUTED"}, *PAYLOADS[4:]]
    assert chain.compare(SIGNED, tampered) == [chain.Alteration("changed", 3, 3)]


def test_a_removed_event_is_named_by_its_index() -> None:
    assert chain.compare(SIGNED, PAYLOADS[:2] + PAYLOADS[3:]) == [chain.Alteration("removed", 2, None)]


def test_an_inserted_event_is_named_by_where_it_now_stands() -> None:
    forged = {"type": "VerdictOverridden", "label": "REFUTED", "by": "Ana Ruiz"}
    assert chain.compare(SIGNED, [*PAYLOADS[:4], forged, *PAYLOADS[4:]]) == [chain.Alteration("inserted", None, 4)]


def test_reordered_events_are_named_with_where_they_went() -> None:
    swapped = [PAYLOADS[0], PAYLOADS[1], PAYLOADS[4], PAYLOADS[2], PAYLOADS[3], PAYLOADS[5]]
    found = chain.compare(SIGNED, swapped)
    assert found == [chain.Alteration("reordered", 4, 2)]
    assert found[0].describe() == "event 4 was moved to index 2"


# --- the run store's chain ------------------------------------------------------------------------------------


def _stored_run(store: RunStore, run_id: str = "r1") -> list[dict[str, object]]:
    store.create_run(run_id, "Masks work", "single", {"protocol": "single"})
    events = [
        RunStarted(run_id=run_id, claim="Masks work", protocol="single"),
        StageStarted(stage="answer"),
        StageStarted(stage="judge"),
        VerdictReached(verdict=Verdict(label="SUPPORTS", confidence=0.7)),
    ]
    store.append_many(run_id, events[:2])
    store.append(run_id, events[2])
    store.append(run_id, events[3])
    return [dump_event(e) for e in events]


def test_events_are_chained_where_they_are_stored(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    payloads = _stored_run(store)
    found = store.stored_chain("r1")
    assert found.intact and found.describe() == "intact: 4 events chained"
    assert found.head == chain.links(payloads)[-1]
    other = RunStore(store_url)  # another process appending later continues the same chain
    other.append("r1", VerdictOverridden(label="REFUTES", note="the trial was retracted", by="Ana"))
    assert other.stored_chain("r1").intact and other.stored_chain("r1").events == 5


def _sql(url: str, statement: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(statement))
    engine.dispose()


@pytest.mark.parametrize(
    ("tamper", "broken"),
    [
        ("UPDATE events SET payload = REPLACE(payload, 'SUPPORTS', 'REFUTES') WHERE run_id = 'r1' AND seq = 4", (4,)),
        ("DELETE FROM events WHERE run_id = 'r1' AND seq = 2", (3,)),
        ("UPDATE events SET seq = CASE seq WHEN 2 THEN 3 ELSE 2 END WHERE run_id = 'r1' AND seq IN (2, 3)", (2, 3, 4)),
    ],
    ids=["changed", "removed", "reordered"],
)
def test_the_stored_chain_says_where_an_edit_in_the_database_broke_it(store_url: str, tamper: str, broken: tuple[int, ...]) -> None:  # noqa: F811
    store = RunStore(store_url)
    _stored_run(store)
    if "CASE" in tamper:  # swap through a free seq: the (run_id, seq) pair is unique
        _sql(store_url, "UPDATE events SET seq = 99 WHERE run_id = 'r1' AND seq = 2")
        _sql(store_url, "UPDATE events SET seq = 2 WHERE run_id = 'r1' AND seq = 3")
        _sql(store_url, "UPDATE events SET seq = 3 WHERE run_id = 'r1' AND seq = 99")
    else:
        _sql(store_url, tamper)
    found = RunStore(store_url).stored_chain("r1")
    assert not found.intact and found.broken_at == broken
    assert found.describe().startswith(f"broken: the stored chain does not hold at event seq {broken[0]}")


def test_an_inserted_row_breaks_the_stored_chain(store_url: str) -> None:  # noqa: F811
    store = RunStore(store_url)
    _stored_run(store)
    forged = json.dumps(dump_event(VerdictOverridden(label="REFUTES", by="Ana Ruiz", note="approved")))
    _sql(store_url, "UPDATE events SET seq = seq + 1 WHERE run_id = 'r1' AND seq >= 4")  # make room after event 3 (none at 5 yet)
    engine = create_engine(store_url)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO events (run_id, seq, type, at, payload, chain) VALUES ('r1', 4, 'VerdictOverridden', 1.0, :p, :c)"),
            {"p": forged, "c": "ab" * 32},
        )
    engine.dispose()
    found = RunStore(store_url).stored_chain("r1")
    assert found.broken_at == (4, 5)


def test_runs_stored_before_chaining_are_not_chained_rather_than_broken(store_url: str) -> None:  # noqa: F811
    engine = create_engine(store_url)
    with engine.begin() as conn:  # the events table as it was before the chain column
        conn.execute(text("CREATE TABLE runs (id VARCHAR(64) PRIMARY KEY, claim TEXT, protocol VARCHAR(64), status VARCHAR(16), "
                          "verdict VARCHAR(64), confidence FLOAT, created_at FLOAT, finished_at FLOAT, config TEXT, "
                          "app_version VARCHAR(32), model_calls INTEGER, tokens_in INTEGER, tokens_out INTEGER)"))  # fmt: skip
        serial = "INTEGER" if store_url.startswith("sqlite") else "SERIAL"
        conn.execute(text(f"CREATE TABLE events (id {serial} PRIMARY KEY, run_id VARCHAR(64) REFERENCES runs(id), seq INTEGER, "
                          "type VARCHAR(64), at FLOAT, payload TEXT)"))  # fmt: skip
        conn.execute(
            text("INSERT INTO runs VALUES ('old', 'Old claim', 'single', 'completed', 'SUPPORTS', NULL, 1.0, 2.0, '{}', '0.1.0', 0, 0, 0)")
        )
        started = json.dumps(dump_event(RunStarted(run_id="old", claim="Old claim", protocol="single", at=1.0)))
        conn.execute(text("INSERT INTO events (run_id, seq, type, at, payload) VALUES ('old', 1, 'RunStarted', 1.0, :p)"), {"p": started})
    engine.dispose()
    store = RunStore(store_url)
    assert store.stored_chain("old").describe() == chain.NOT_CHAINED and not store.stored_chain("old").broken_at
    store.append("old", VerdictOverridden(label="REFUTES", note="checked the source", by="Ana"))
    found = store.stored_chain("old")
    assert found.chained == 1 and not found.broken_at
    assert found.describe() == f"intact from event seq 2; the 1 before were {chain.NOT_CHAINED}"


def test_a_file_made_to_be_slow_to_align_is_checked_quickly() -> None:
    import time

    same, other = {"type": "E", "n": 0}, {"type": "E", "n": 1}  # thousands of identical events: the alignment's worst case
    signed = [chain.event_digest(same)] * 20_000
    began = time.perf_counter()
    assert chain.compare(signed, [same] * 6_000 + [other] + [same] * 13_999) == [chain.Alteration("changed", 6_000, 6_000)]
    assert chain.compare(signed, [other] + [same] * 19_998 + [other]) == [chain.Alteration("changed", 0, 0)], "named from the first"
    assert time.perf_counter() - began < 20, "aligning 20,000 identical digests one by one takes minutes"


def test_several_alterations_are_each_named() -> None:
    tampered = [PAYLOADS[0], {**PAYLOADS[1], "text": "edited"}, PAYLOADS[2], PAYLOADS[3], PAYLOADS[5]]
    assert chain.compare(SIGNED, tampered) == [chain.Alteration("changed", 1, 1), chain.Alteration("removed", 4, None)]
