import csv
import io
import itertools
import json

import pytest

from pipelines.run.batch import MAX_BATCH_CLAIMS, BatchInputError, parse_claims_file, parse_claims_text, run_batch, to_csv, to_jsonl
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.services import Services
from tests.fakes import fake_config

CLAIMS = [
    "Masks reduce transmission of respiratory viruses",
    "Vaccines cause autism",
    "The Moon landings were staged",
    "Climate change is driven by human activity",
    "Antibiotics cure viral infections",
]


def test_a_batch_with_two_failing_claims_stores_the_rest_and_exports_every_row(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_when="EXPLODE")
    claims = [f"{CLAIMS[i % len(CLAIMS)]} (case {i})" for i in range(20)]
    claims[4] += " EXPLODE"
    claims[13] += " EXPLODE"
    items = parse_claims_text("\n".join(claims))
    seen: list[str] = []
    outcomes = run_batch(items, fake_config(protocol="single"), services, concurrency=4, on_outcome=lambda o: seen.append(o.id))

    assert len(outcomes) == 20 and sorted(seen, key=int) == [str(i) for i in range(1, 21)]
    failed = [o for o in outcomes if o.status == "failed"]
    assert [o.id for o in failed] == ["5", "14"]
    assert all("told to fail on 'EXPLODE'" in o.error for o in failed)
    assert services.store is not None
    runs = {o.run_id: services.store.get_run(o.run_id) for o in outcomes if o.run_id}
    completed = [r for r in runs.values() if r is not None and r.status == "completed"]
    assert len(completed) == 18
    assert {r.claim for r in completed} == {o.claim for o in outcomes if o.status == "completed"}
    assert all(runs[o.run_id].status == "failed" for o in failed if o.run_id)  # type: ignore[union-attr]

    rows = list(csv.DictReader(io.StringIO(to_csv(outcomes))))
    assert len(rows) == 20 and [r["id"] for r in rows] == [str(i) for i in range(1, 21)]
    assert rows[4]["status"] == "failed" and "EXPLODE" in rows[4]["error"] and rows[0]["verdict"] == "SUPPORTED"
    assert rows[0]["protocol_word"] == "SUPPORTS", "the one vocabulary, the protocol's own word beside it"
    lines = [json.loads(line) for line in to_jsonl(outcomes).splitlines()]
    assert len(lines) == 20 and lines[13]["status"] == "failed" and lines[0]["model_calls"] == 4


def test_a_claim_refused_before_it_starts_is_reported_and_the_rest_go_on(services: Services) -> None:
    items = parse_claims_text(f"{CLAIMS[0]}\n{'x' * 3000}\n{CLAIMS[1]}")
    outcomes = run_batch(items, fake_config(protocol="single"), services, concurrency=2)
    assert [o.status for o in outcomes] == ["completed", "failed", "completed"]
    assert "the limit is 2,000" in outcomes[1].error and outcomes[1].run_id is None


def test_batch_runs_share_one_bound_per_backend(services: Services) -> None:
    """Four claims at once, each run limited to 1 call at a time: never two calls in flight together."""
    services.chat_override = FakeChatModel(latency_s=0.05)
    config = fake_config(protocol="single")
    config = config.with_backend("fake").model_copy(
        update={r: getattr(config, r).model_copy(update={"concurrency": 1}) for r in ("debater", "judge", "scorer")}
    )
    outcomes = run_batch(parse_claims_text("\n".join(CLAIMS[:4])), config, services, concurrency=4)
    assert services.store is not None
    intervals = []
    for o in outcomes:
        for evt in services.store.events(o.run_id or ""):
            if evt.type == "ModelCallCompleted":  # type: ignore[attr-defined]
                intervals.append((evt.at - evt.seconds, evt.at))  # type: ignore[attr-defined]
    intervals.sort()
    assert len(intervals) == 16  # 4 claims: the query, the answer, the belief in its 2 option orders
    overlaps = sum(1 for (_, e1), (s2, _) in itertools.pairwise(intervals) if s2 < e1 - 0.01)
    assert overlaps == 0, intervals


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("c.csv", b"", "the file is empty"),
        ("c.csv", b"   \n", "the file is empty"),
        ("c.csv", b"statement,source\nMasks work,who\n", r"no 'claim' column \(found columns: 'statement', 'source'\)"),
        ("c.csv", b"claim,id\n", "header but no rows"),
        ("c.csv", b"claim,id\nMasks work,1\n,2\n", "empty claim on line 3"),
        ("c.csv", "claim\ncafé au lait\n".encode("latin-1"), r"not UTF-8 text \(byte 0xe9"),
        ("c.csv", b"PK\x03\x04\x00\x00binary", "binary file"),
        ("c.csv", b"claim,id\nA,1\nB,1\n", "id '1' is used twice"),
        ("c.jsonl", b'{"claim": "a"}\n{oops\n', "line 2: not valid JSON"),
        ("c.jsonl", b'{"statement": "a"}\n', r'line 1: needs a non-empty "claim" \(found fields: statement\)'),
        ("c.jsonl", b'["a"]\n', "expected an object"),
        ("c.xlsx", b"whatever", "use a .csv file"),
    ],
)
def test_bad_uploads_get_clear_messages(name: str, data: bytes, message: str) -> None:
    with pytest.raises(BatchInputError, match=message):
        parse_claims_file(data, name)


def test_good_uploads_in_every_format() -> None:
    csv_items = parse_claims_file("\ufeffid,Claim,notes\nm1,Masks   work,x\n,Vaccines work,\n\n".encode(), "c.csv")
    assert [(i.id, i.claim) for i in csv_items] == [("m1", "Masks work"), ("2", "Vaccines work")]
    semicolons = parse_claims_file(b"claim;source\nMasks work;who\nVaccines work;cdc\n", "c.csv")
    assert [i.claim for i in semicolons] == ["Masks work", "Vaccines work"]
    jsonl = parse_claims_file(b'{"claim": "Masks work", "id": "a"}\n\n{"text": "Vaccines work"}\n', "c.jsonl")
    assert [(i.id, i.claim) for i in jsonl] == [("a", "Masks work"), ("2", "Vaccines work")]
    text = parse_claims_file(b"Masks work\n\n  Vaccines work  \n", "c.txt")
    assert [(i.index, i.id, i.claim) for i in text] == [(0, "1", "Masks work"), (1, "2", "Vaccines work")]


def test_pasted_lists_are_checked_too() -> None:
    with pytest.raises(BatchInputError, match="no claims"):
        parse_claims_text(" \n\n")
    with pytest.raises(BatchInputError, match=f"the limit is {MAX_BATCH_CLAIMS:,}"):
        parse_claims_text("\n".join(f"claim {i}" for i in range(MAX_BATCH_CLAIMS + 1)))


def test_concurrency_out_of_range_is_refused(services: Services) -> None:
    with pytest.raises(BatchInputError, match="between 1 and 16"):
        run_batch(parse_claims_text("a claim"), fake_config(protocol="single"), services, concurrency=0)
