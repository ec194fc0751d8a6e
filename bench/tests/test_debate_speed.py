"""Smoke test of bench/debate_speed.py on the fake backend: toolmad and single on the demo claim, every figure reported."""

from pathlib import Path

import pytest

from bench.debate_speed import Rates, ServerWork, measure, measure_again, outside_calls, report, run_set, server_work
from bench.record_embedded import DEMO_CLAIMS
from pipelines.core.config import AppSettings
from pipelines.core.events import ModelCallCompleted, QueryIssued, StageCompleted, StageStarted
from pipelines.run.llm.fake import FakeChatModel
from tests.fakes import make_services

LOG = """
0.01.000.001 I slot print_timing: id  0 | task 7 | prompt eval time =     500.00 ms /   100 tokens (    5.00 ms per token,   200.00 tokens per second)
0.01.000.002 I slot print_timing: id  0 | task 7 |        eval time =    1000.00 ms /    30 tokens (   33.33 ms per token,    30.00 tokens per second)
0.01.000.003 I slot print_timing: id  0 | task 7 |       total time =    1500.00 ms /   130 tokens
0.01.500.001 I slot print_timing: id  0 | task 9 | prompt eval time =      50.00 ms /    12 tokens (    4.17 ms per token,   240.00 tokens per second)
0.01.500.002 I slot print_timing: id  0 | task 9 |        eval time =     250.00 ms /     8 tokens (   31.25 ms per token,    32.00 tokens per second)
"""


def test_server_work_sums_each_tasks_prompt_and_decode_lines() -> None:
    work = server_work(LOG)
    assert (work.tasks, work.prompt_tokens, work.decoded_tokens) == (2, 112, 38)
    assert work.prompt_s == pytest.approx(0.55) and work.decode_s == pytest.approx(1.25) and work.seconds == pytest.approx(1.8)
    assert server_work("no timing here").tasks == 0


def test_time_outside_calls_goes_to_the_open_stage_or_the_last_event() -> None:
    events = [
        StageStarted(stage="RAG round 1 query", at=0.0),
        ModelCallCompleted(role="debater", model="m", seconds=1.0, at=1.0),
        StageCompleted(stage="RAG round 1 query", at=1.5),  # 0.5 s in the stage after its call
        QueryIssued(agent="RAG", round=1, query="q", tool="corpus", at=1.5),
        StageStarted(stage="RAG round 1 answer", at=3.5),  # 2 s of search with no stage open
        ModelCallCompleted(role="debater", model="m", seconds=1.0, at=4.5),
    ]
    where = outside_calls(events)
    assert where["RAG query"] == pytest.approx(0.5)
    assert where["no stage open, after QueryIssued"] == pytest.approx(2.0)
    assert sum(where.values()) == pytest.approx(2.5)


def test_toolmad_and_single_on_the_fake_backend_report_every_figure(demo_data_dir: Path, embedder, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    services = make_services(demo_data_dir, embedder, chat=FakeChatModel(latency_s=0.01))
    records = tmp_path / "records.jsonl"
    rates = Rates(prompt=200.0, decode=20.0, source="given")
    results = run_set(services, AppSettings(data_dir=demo_data_dir), DEMO_CLAIMS, ["toolmad", "single"], "fake", rates, records)
    assert [r.protocol for r in results] == ["toolmad", "single"]
    toolmad, single = results
    assert toolmad.calls > single.calls >= 2 and toolmad.tokens_in > single.tokens_in > 0
    for r in results:
        assert r.verdict in {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}
        assert r.recorded, "the demo claim's earlier verdicts are known for both protocols"
        assert r.own_work_s == pytest.approx(r.tokens_in / 200 + r.tokens_out / 20, abs=0.01)
        assert r.ratio == pytest.approx(r.wall_s / r.own_work_s, rel=0.01)
        assert 0 < r.in_calls_s <= r.calls_sum_s + 0.01 and r.in_calls_s <= r.wall_s
        assert r.outside_calls_s == pytest.approx(r.wall_s - r.in_calls_s, abs=0.01)
        assert r.server == {}, "no llama-server log on the fake backend"
        assert r.app_cpu_s > 0
    assert toolmad.peak_in_flight >= 2, "toolmad's debaters and scorers call at once"
    assert toolmad.waiting_s > 0
    assert len(records.read_text().splitlines()) == 2
    rendered = report(results, rates)
    assert "| toolmad | demo-masks |" in rendered and "median wall" in rendered and "n/a" in rendered


def test_the_reading_rate_share_is_the_library_s_time_for_the_server_s_work_over_the_time_in_calls() -> None:
    events = [
        ModelCallCompleted(role="judge", model="m", seconds=1.0, at=1.0, tokens_in=250, tokens_out=1),
        ModelCallCompleted(role="judge", model="m", seconds=1.0, at=3.0, tokens_in=250, tokens_out=1),  # 1 s between calls
    ]
    server = ServerWork(tasks=2, prompt_tokens=300, prompt_s=1.4, decoded_tokens=2, decode_s=0.1)  # 200 tokens came from its cache
    result = measure(
        events,
        3.5,
        Rates(prompt=200.0, decode=20.0, source="given"),
        protocol="desk",
        corpus="demo",
        claim_id="c",
        claim="c",
        server=server,
    )
    assert result.in_calls_s == pytest.approx(2.0)
    assert result.reading_share == pytest.approx((300 / 200 + 2 / 20) / 2.0)  # 0.8: a fifth of the time in calls is overhead
    assert "| 0.80 |" in report([result], Rates(prompt=200.0, decode=20.0, source="given"))
    alone = measure(
        events, 3.5, Rates(prompt=200.0, decode=20.0, source="given"), protocol="desk", corpus="demo", claim_id="c", claim="c", server=None
    )
    assert alone.reading_share != alone.reading_share, "no server log: not a number, never a made-up share"
    # after the claims the library is timed again and every figure that rests on its rates is measured with the mean
    again = measure_again(result, Rates(prompt=100.0, decode=10.0, source="mean of before and after"))
    assert again.reading_share == pytest.approx((300 / 100 + 2 / 10) / 2.0) and again.own_work_s == pytest.approx(500 / 100 + 2 / 10)
    still = measure_again(alone, Rates(prompt=100.0, decode=10.0, source="mean")).reading_share
    assert still != still, "still no server log: still not a number"


def test_the_paired_table_sets_each_claim_run_always_beside_its_run_contested() -> None:
    from dataclasses import replace

    from bench.debate_speed import ClaimResult, paired
    from pipelines.stages.exhibit_reading import UNCONTESTED

    base = ClaimResult(
        protocol="radar", corpus="c", claim_id="a", claim="x", verdict="SUPPORTS", recorded="", recorded_in="", wall_s=100.0,
        calls=40, cached_calls=0, tokens_in=9000, tokens_out=900, own_work_s=0.0, ratio=0.0, in_calls_s=0.0, outside_calls_s=0.0,
        calls_sum_s=0.0, waiting_s=0.0, peak_in_flight=1, confidence=0.8, decided_by="calibrated reading of the debate's evidence",
        server={"prompt_tokens": 6000, "prompt_s": 1.0, "decoded_tokens": 900, "decode_s": 1.0},
    )  # fmt: skip
    results = [
        base,
        replace(base, claim_id="b", server={**base.server, "prompt_tokens": 8000}),
        replace(
            base, debate_when="contested", wall_s=30.0, calls=20, decided_by=UNCONTESTED, server={**base.server, "prompt_tokens": 2000}
        ),
        replace(base, claim_id="b", debate_when="contested", verdict="REFUTES", server={**base.server, "prompt_tokens": 8000}),
        replace(base, claim_id="c", confidence=0.9031),
        replace(base, claim_id="c", debate_when="contested", confidence=0.9037, decided_by=UNCONTESTED),
    ]
    row = paired(results).splitlines()[-1]
    assert row.startswith("| radar | 3 | 1 |"), "three claims paired, one still debated with contested"
    assert "| 6,000 / 6,000 | 1.00 |" in row and "| 2 of 3 | 2 of 3 |" in row, "0.9031 and 0.9037 are the same reading"
