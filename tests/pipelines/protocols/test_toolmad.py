"""The `toolmad` protocol on the fake backend: rounds, early stop, judge, rewrites, fallbacks, failures, concurrency, review."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

import pytest
from pydantic import Field

from pipelines.core import events as ev
from pipelines.core.domain import Claim, Verdict
from pipelines.protocols.toolmad.run import run_toolmad
from pipelines.record.timeline import peak_in_flight
from pipelines.run.context import Review, RunContext, Toolbox
from pipelines.run.llm.client import LLM
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.runner import stream_run
from pipelines.run.services import Services
from pipelines.run.tools.web import WebResult
from tests.fakes import CannedWeb, DeadWeb, protocol_config

AGREED = "Masks reduce transmission of respiratory viruses"  # the demo corpus supports it plainly
UNRELATED = "Quantum chromodynamics explains stock prices"  # nothing in the demo corpus bears on it
REFUTING_WEB = CannedWeb(
    [
        WebResult(
            title="Mask myths",
            url="https://example.org/mask-myths",
            snippet="Masks do not reduce transmission of respiratory viruses, claims a viral post; ventilation and hand washing matter.",
        )
    ]
)


def run(claim: str, services: Services, **toolmad: object) -> list[ev.Event]:
    return list(stream_run(claim, protocol_config("toolmad", **toolmad), services))


def verdict_of(events: Sequence[ev.Event]) -> Verdict:
    last = events[-1]
    assert isinstance(last, ev.VerdictReached), last
    return last.verdict


def of(events: Sequence[ev.Event], kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in events if isinstance(e, kind)]


def by_round(events: Sequence[ev.Event]) -> dict[int, list[ev.Event]]:
    rounds: dict[int, list[ev.Event]] = {}
    current = 0
    for e in events:
        if isinstance(e, ev.RoundStarted):
            current = e.round
        rounds.setdefault(current, []).append(e)
    return rounds


def test_each_round_queries_retrieves_argues_and_scores_both_debaters_then_the_judge_rules(services: Services) -> None:
    events = run(UNRELATED, services)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1, 2, 3]
    for number, chunk in by_round(events).items():
        if number == 0:
            continue
        for agent, tool in (("RAG", "corpus"), ("Search", "web")):
            turn_id = f"{agent}-r{number}"
            mine = [
                e
                for e in chunk
                if getattr(e, "agent", None) == agent
                or getattr(e, "turn_id", None) == turn_id
                or getattr(e, "target", None) == turn_id
                or (isinstance(e, ev.TurnCompleted) and e.turn.id == turn_id)
            ]
            kinds = [type(e) if not isinstance(e, ev.ScoreComputed) else e.metric for e in mine]
            assert (
                kinds.index(ev.QueryIssued)
                < kinds.index(ev.ArgumentDelta)
                < kinds.index(ev.TurnCompleted)
                < kinds.index(ev.StatementChecked)
            )
            assert kinds.count("F") == kinds.count("AR") == 1, "one F and one AR per answer"
            last_statement = len(kinds) - 1 - kinds[::-1].index(ev.StatementChecked)
            assert last_statement < kinds.index("F"), "F is emitted after its statements"
            assert kinds.index(ev.TurnCompleted) < kinds.index("AR")
            assert [e.tool for e in chunk if isinstance(e, ev.QueryIssued) and e.agent == agent] == [tool]
            metrics = {e.metric: e for e in chunk if isinstance(e, ev.ScoreComputed) and e.target == turn_id}
            assert metrics["F"].threshold == 0.7 and metrics["AR"].threshold == 0.5
    judge = [e.turn for e in of(events, ev.TurnCompleted) if e.turn.agent == "Judge"]
    assert len(judge) == 1 and events.index(of(events, ev.RoundStarted)[-1]) < len(events) - 2
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and verdict.label == "NOT ENOUGH INFO"
    assert "no consensus after 3 round(s)" in verdict.stop_reason and "mean F 0.00" in verdict.stop_reason


def test_agreeing_well_grounded_debaters_stop_after_round_one(services: Services) -> None:
    events = run(AGREED, services)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1]
    scores = of(events, ev.ScoreComputed)
    assert {(s.target, s.metric) for s in scores} == {("RAG-r1", "F"), ("RAG-r1", "AR"), ("Search-r1", "F"), ("Search-r1", "AR")}
    assert all(s.value >= s.threshold for s in scores)
    verdict = verdict_of(events)
    assert verdict.decided_by == "consensus" and verdict.label == "SUPPORTS"
    assert verdict.stop_reason.startswith("consensus in round 1: both debaters say SUPPORTS")
    assert "F 1.00≥0.70" in verdict.stop_reason and verdict.cited
    assert not any(isinstance(e, ev.StageStarted) and e.stage == "judge" for e in events)


def test_agreement_without_passing_scores_goes_to_the_judge(services: Services) -> None:
    events = run(AGREED, services, relevance_threshold=0.99)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1, 2, 3]
    labels = {e.turn.label for e in of(events, ev.TurnCompleted) if e.turn.agent != "Judge"}
    assert labels == {"SUPPORTS"}, "they agree every round, but AR stays under 0.99"
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and re.search(r"AR 0\.9\d<0\.99", verdict.stop_reason)


def test_disagreeing_debaters_rewrite_their_queries_and_the_judge_rules(services: Services) -> None:
    services.web = REFUTING_WEB  # type: ignore[assignment]
    events = run(AGREED, services)
    turns = {e.turn.id: e.turn for e in of(events, ev.TurnCompleted)}
    assert turns["RAG-r1"].label == "SUPPORTS" and turns["Search-r1"].label == "REFUTES"
    queries = {(q.agent, q.round): q for q in of(events, ev.QueryIssued)}
    assert not queries[("RAG", 1)].rewritten
    rewritten = [q for q in queries.values() if q.round == 2 and q.rewritten]
    assert rewritten, "after a disagreement at least one debater rewrites its query"
    for q in rewritten:
        assert q.query != queries[(q.agent, 1)].query
    assert verdict_of(events).decided_by == "judge"


def test_a_query_kept_word_for_word_is_not_marked_rewritten(services: Services) -> None:
    events = run(UNRELATED, services)
    queries = {(q.agent, q.round): q for q in of(events, ev.QueryIssued)}
    assert queries[("RAG", 2)].query == queries[("RAG", 1)].query and not queries[("RAG", 2)].rewritten


def test_without_the_web_the_search_debater_searches_the_corpus_and_says_so(services: Services) -> None:
    events = run(UNRELATED, services)
    down = of(events, ev.WebSearchUnavailable)
    assert [(d.agent, d.round, d.fallback) for d in down] == [("Search", n, "corpus search") for n in (1, 2, 3)]
    search_turn = next(e.turn for e in of(events, ev.TurnCompleted) if e.turn.id == "Search-r1")
    assert search_turn.text and search_turn.label


def test_with_the_web_the_search_debater_argues_from_web_pages(services: Services) -> None:
    services.web = CannedWeb()  # type: ignore[assignment]
    events = run(AGREED, services)
    search = [e.evidence for e in of(events, ev.EvidenceRetrieved) if e.agent == "Search"]
    assert search and {e.source for e in search} == {"web"}
    rag = [e.evidence for e in of(events, ev.EvidenceRetrieved) if e.agent == "RAG"]
    assert rag and {e.source for e in rag} == {"corpus"}
    assert not of(events, ev.WebSearchUnavailable)


def test_every_number_comes_from_the_config(services: Services) -> None:
    events = run(UNRELATED, services, rounds=2, rag_top_k=1, relevance_questions=2, faithfulness_threshold=0.5)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1, 2]
    # A passage both debaters find is reported once, for whichever search lands first (the web is
    # down, so Search searches the corpus too): RAG adds its top 1 or nothing new, never the default 3.
    assert len([e for e in of(events, ev.EvidenceRetrieved) if e.agent == "RAG" and e.round == 1]) <= 1
    ar = next(s for s in of(events, ev.ScoreComputed) if s.metric == "AR")
    assert "with 2 generated question(s)" in ar.detail
    assert {s.threshold for s in of(events, ev.ScoreComputed) if s.metric == "F"} == {0.5}
    assert "no consensus after 2 round(s)" in verdict_of(events).stop_reason


def test_with_early_stop_off_the_debate_runs_every_round(services: Services) -> None:
    events = run(AGREED, services, early_stop=False, rounds=2)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1, 2] and verdict_of(events).decided_by == "judge"


def test_a_failed_debater_answer_leaves_the_other_arguing_and_the_judge_decides(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_when="You are the Search debater")
    events = run(AGREED, services)
    failed = of(events, ev.StageFailed)
    assert [f.stage for f in failed] == [f"Search round {n} answer" for n in (1, 2, 3)]
    assert "told to fail" in failed[0].reason and "sits out" in failed[0].reason
    assert [e.turn.id for e in of(events, ev.TurnCompleted)] == ["RAG-r1", "RAG-r2", "RAG-r3", "Judge-r0"]
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and "Search gave no answer" in verdict.stop_reason


def test_a_failed_score_counts_as_not_passing(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_when="You check statements against the evidence")
    events = run(AGREED, services, rounds=2)
    failed = of(events, ev.StageFailed)
    assert {f.stage for f in failed} == {f"{a} round {n} faithfulness" for a in ("RAG", "Search") for n in (1, 2)}
    assert {s.metric for s in of(events, ev.ScoreComputed)} == {"AR"}, "AR is still computed and shown"
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and "F failed" in verdict.stop_reason and "mean F n/a" in verdict.stop_reason


def test_a_failed_judge_falls_back_to_the_debaters_labels(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_when="You are the judge")
    events = run(UNRELATED, services, rounds=1)
    assert [f.stage for f in of(events, ev.StageFailed)] == ["judge"]
    verdict = verdict_of(events)
    assert verdict.decided_by == "fallback" and verdict.label == "NOT ENOUGH INFO" and "the judge failed" in verdict.stop_reason


class SelfContradictingJudge(FakeChatModel):
    """The fake, except that the judge answers as Qwen 1.5B did in 6 of 21 rulings: two labels, no reasons."""

    def reply(self, messages, response_format=None):  # type: ignore[no-untyped-def]
        if response_format is None and "You are the judge" in str(messages[0].content):
            return "Ruling: REFUTES\n\nLabel: NOT ENOUGH INFO"
        return super().reply(messages, response_format)


def test_a_judge_that_names_two_labels_keeps_its_label_line_and_the_verdict_says_so(services: Services) -> None:
    services.chat_override = SelfContradictingJudge()
    events = run(UNRELATED, services, rounds=1)
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and verdict.label == "NOT ENOUGH INFO"
    assert "names REFUTES and NOT ENOUGH INFO: its last label line counts" in verdict.stop_reason
    judged = [e for e in of(events, ev.StageCompleted) if e.stage == "judge"]
    assert [e.detail for e in judged] == ["NOT ENOUGH INFO (its answer also names REFUTES)"]


def test_a_judge_with_one_label_gets_no_conflict_note(services: Services) -> None:
    events = run(UNRELATED, services, rounds=1)
    verdict = verdict_of(events)
    assert verdict.decided_by == "judge" and "names" not in verdict.stop_reason


def test_a_dead_model_fails_the_run_with_the_reason(services: Services) -> None:
    services.chat_override = FakeChatModel(fail_after=0)
    events = run(AGREED, services)
    assert isinstance(events[-1], ev.RunFailed) and "simulated crash" in events[-1].reason
    assert of(events, ev.StageFailed), "each failed call was reported before the run gave up"


def intervals(events: Sequence[ev.Event], role: str) -> list[tuple[float, float]]:
    return [(e.at - e.seconds, e.at) for e in of(events, ev.ModelCallCompleted) if e.role == role]


def test_both_debaters_and_all_scores_of_a_round_run_concurrently(services: Services) -> None:
    latency = 0.2
    services.chat_override = FakeChatModel(latency_s=latency)
    events = run(AGREED, services)
    assert verdict_of(events).decided_by == "consensus"
    starts = {e.stage.split()[0]: e.at for e in of(events, ev.StageStarted) if e.stage.endswith("round 1 answer")}
    done = {e.turn.agent: e.at for e in of(events, ev.TurnCompleted)}
    # The two answers overlap: each starts before the other has finished ...
    assert starts["RAG"] < done["Search"] and starts["Search"] < done["RAG"]
    # ... and both calls were in flight at once (how much wall time that saves is measured in bench/toolmad_overhead.py,
    # not asserted here: a loaded machine stretches any timing).
    answer_calls = [e.seconds for e in of(events, ev.ModelCallCompleted) if e.role == "debater" and e.at > min(starts.values())]
    assert len(answer_calls) == 2 and min(answer_calls) >= latency
    assert peak_in_flight(intervals(events, "debater")) == 2
    # Each answer's statements and questions are asked for at once, and both answers' scores overlap.
    assert peak_in_flight(intervals(events, "scorer")) >= 3, "F and AR of both answers are computed at once"


# --- step mode: the review hook after each round ----------------------------------------


class Recorder(FakeChatModel):
    """The fake, remembering every prompt it was sent."""

    prompts: list[str] = Field(default_factory=list)

    def reply(self, messages, response_format=None):  # type: ignore[no-untyped-def]
        self.prompts.append("\n".join(str(m.content) for m in messages))
        return super().reply(messages, response_format)


def direct_run(
    services: Services, claim: str, reviewer, events: list[ev.Event] | None = None, chat: Recorder | None = None, **toolmad: object
):  # type: ignore[no-untyped-def]
    """Run toolmad in-process with a reviewer (the runner has no step mode yet); returns events, verdict and the prompts sent."""
    chat = chat or Recorder(prompts=[])
    config = protocol_config("toolmad", **toolmad)
    events = events if events is not None else []
    services.ensure_corpus("demo")
    ctx = RunContext(
        run_id="test",
        claim=Claim(text=claim),
        config=config,
        llms={role: LLM(chat, role=role, model_name="fake") for role in ("debater", "judge", "scorer")},
        tools=Toolbox(index=services.index, web=DeadWeb(), embedder=services.embedder),
        emit=events.append,
        reviewer=reviewer,
    )
    verdict = asyncio.run(run_toolmad(ctx))
    return events, verdict, chat


def test_the_review_hook_sees_the_next_queries_after_every_round(services: Services) -> None:
    seen: list[tuple[int, dict[str, str]]] = []

    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        seen.append((number, dict(next_queries)))
        return Review()

    direct_run(services, UNRELATED, reviewer)
    assert [n for n, _ in seen] == [0, 1, 2, 3], "the first queries before any search, then after every round"
    assert set(seen[0][1]) == set(seen[1][1]) == {"RAG", "Search"} and seen[3][1] == {}, "after the last round there is no next query"


def test_the_checker_can_edit_a_query_and_add_one(services: Services) -> None:
    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review(queries={"RAG": "stock market physics"}, extra_queries=("mask trials",)) if number == 1 else Review()

    events, _, _ = direct_run(services, UNRELATED, reviewer, rounds=2)
    round2 = [q for q in of(events, ev.QueryIssued) if q.round == 2]
    assert [(q.agent, q.query, q.rewritten) for q in round2 if q.agent == "RAG"] == [
        ("RAG", "stock market physics", True),
        ("RAG", "mask trials", False),
    ]
    assert [q.query for q in round2 if q.agent == "Search"] == [UNRELATED.lower(), "mask trials"]


def test_the_checker_can_stop_the_debate(services: Services) -> None:
    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review(stop=True)

    events, verdict, _ = direct_run(services, UNRELATED, reviewer)
    assert [e.round for e in of(events, ev.RoundStarted)] == [1]
    assert verdict.decided_by == "judge" and "the checker stopped the debate after round 1" in verdict.stop_reason


def test_struck_evidence_is_kept_from_the_debaters_and_the_judge(services: Services) -> None:
    events: list[ev.Event] = []
    struck: list[str] = []
    prompts_before_review: list[int] = []

    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        if number == 1:
            struck.append(of(events, ev.EvidenceRetrieved)[0].evidence.id)
            prompts_before_review.append(len(recorder.prompts))
        return Review(struck={eid: "off topic" for eid in struck})

    recorder = Recorder(prompts=[])
    direct_run(services, AGREED, reviewer, events=events, chat=recorder, rounds=2, relevance_threshold=0.99)
    (eid,) = struck
    earlier, later = recorder.prompts[: prompts_before_review[0]], recorder.prompts[prompts_before_review[0] :]
    shown = re.compile(rf"^\[{eid}\] ", flags=re.M)
    assert any(shown.search(p) for p in earlier), "round 1 did show the item"
    assert later and not any(shown.search(p) for p in later), "after the strike no prompt shows it"
    assert any("You are the judge" in p for p in later)


@pytest.mark.parametrize("claim", [AGREED, UNRELATED])
def test_turn_ids_are_unique_and_every_score_targets_a_turn(services: Services, claim: str) -> None:
    events = run(claim, services)
    turn_ids = [e.turn.id for e in of(events, ev.TurnCompleted)]
    assert len(turn_ids) == len(set(turn_ids))
    assert {s.target for s in of(events, ev.ScoreComputed)} <= set(turn_ids)
    assert {s.turn_id for s in of(events, ev.StatementChecked)} <= set(turn_ids)


def test_evidence_ids_follow_the_debaters_order_whichever_search_finishes_first(services: Services) -> None:
    """A slow first search must not hand E1 to the other debater: the ids (and so the prompts) repeat run after run."""
    import time

    inner = services.index.search
    calls: list[str] = []

    def slow_first(corpus: str, query: object, k: int = 3, mode: str = "hybrid") -> list:  # type: ignore[type-arg]
        calls.append(str(query))
        if len(calls) == 1:
            time.sleep(0.5)  # RAG's search, started first, finishes last
        return inner(corpus, query, k, mode)  # type: ignore[arg-type]

    services.index.search = slow_first  # type: ignore[method-assign]
    events = run(AGREED, services)
    first = [e for e in events if isinstance(e, ev.EvidenceRetrieved) and e.round == 1]
    assert first and first[0].agent == "RAG" and first[0].evidence.id == "E1"
    rag = [e.evidence.id for e in first if e.agent == "RAG"]
    assert rag == [f"E{i}" for i in range(1, len(rag) + 1)]


def test_the_checker_can_edit_the_first_query_before_any_search(services: Services) -> None:
    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review(queries={"Search": "cloth mask classroom trial"}) if number == 0 else Review()

    events, _, _ = direct_run(services, UNRELATED, reviewer, rounds=1)
    first = [q for q in of(events, ev.QueryIssued) if q.round == 1 and q.agent == "Search"]
    assert first and first[0].query == "cloth mask classroom trial", "the edited first query is the one searched"


def test_a_debater_reads_the_opponents_checked_points_not_its_text(services: Services) -> None:
    """Handed the opponent's answer, the embedded model wrote it again; it gets the points and what each rests on."""

    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review()

    events, _, chat = direct_run(services, UNRELATED, reviewer)
    turns = {e.turn.id: e.turn for e in of(events, ev.TurnCompleted)}
    checked = [s for s in of(events, ev.StatementChecked) if s.turn_id == "Search-r1"]
    assert checked, "the fake's statements of Search's round-1 answer"
    rag_round_2 = next(p for p in chat.prompts if "Give your own argument" in p and "Your opponent (Search) last round" in p)
    assert "Their points, each checked against their evidence:" in rag_round_2
    for s in checked:
        rests = f"rests on [{s.evidence_id}]" if s.supported and s.evidence_id else "not supported by their evidence"
        assert f"- {s.statement} ({rests})" in rag_round_2
    search_text = turns["Search-r1"].text.split("\nLabel:")[0].strip()
    assert search_text not in rag_round_2, "the answer's own paragraph is not in the prompt to be copied"


def test_with_the_read_reader_each_sentence_is_checked_with_one_letter_and_f_counts_them(services: Services) -> None:
    events = run(AGREED, services, faithfulness_reader="read")
    checked = of(events, ev.StatementChecked)
    turns = {e.turn.id: e.turn for e in of(events, ev.TurnCompleted)}
    assert checked and all(c.statement in turns[c.turn_id].text for c in checked), "each statement is a sentence of its answer"
    for score in (s for s in of(events, ev.ScoreComputed) if s.metric == "F"):
        mine = [c for c in checked if c.turn_id == score.target]
        assert score.value == round(sum(c.supported for c in mine) / len(mine), 4)
    calls = [e for e in of(events, ev.ModelCallCompleted) if e.role == "scorer" and e.tokens_out == 1]
    assert len(calls) == len(checked), "one one-token answer a statement"


def test_with_the_sentences_reader_each_sentence_gets_a_verdict_in_one_call_an_answer(services: Services) -> None:
    events = run(AGREED, services, faithfulness_reader="sentences")
    checked = of(events, ev.StatementChecked)
    turns = {e.turn.id: e.turn for e in of(events, ev.TurnCompleted)}
    assert checked and all(c.statement in turns[c.turn_id].text for c in checked), "each statement is a sentence of its answer"
    f_scores = [s for s in of(events, ev.ScoreComputed) if s.metric == "F"]
    assert f_scores and all("the answer's sentences, each given a verdict" in s.detail for s in f_scores)
    structured = [e for e in of(events, ev.ModelCallCompleted) if e.role == "scorer" and e.structured]
    assert len(structured) == 2 * len(f_scores), "an answer's scorer calls: its verdicts and its AR questions, no statements written"


@pytest.mark.parametrize("chosen", ["generated", "read", "sentences"])
def test_the_scorer_keeps_token_probabilities_only_where_faithfulness_is_read(chosen: str) -> None:
    from pipelines.stages.scoring import reads_faithfulness

    config = protocol_config("toolmad", faithfulness_reader=chosen)
    assert reads_faithfulness(config) == (chosen == "read")
    assert not reads_faithfulness(config.model_copy(update={"protocol": "radar"})), "only toolmad scores its answers"


@pytest.mark.parametrize("reader", ["generated", "sentences"])  # read's letters go round the fake's reply: its prompt is checked below
def test_the_scorer_reads_an_answer_on_the_evidence_its_debater_just_read(services: Services, reader: str) -> None:
    """The scorer's faithfulness prompts open with the very evidence block the debater's answer prompt opened with, so the
    server's prompt cache serves it and the scorer reads only its own instructions and the statements."""

    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review()

    _, _, chat = direct_run(services, UNRELATED, reviewer, early_stop=False, faithfulness_reader=reader)
    answers = {p.split("\n\nYou are the ")[0] for p in chat.prompts if "Give your own argument" in p}
    checks = [p.split("\n\nYou check ")[0] for p in chat.prompts if "You check " in p]
    assert answers and checks
    assert all(block.startswith("Evidence:\n[E") for block in answers), "the evidence is the answer prompt's first lines"
    assert all(block in answers for block in checks), "every check opens with the evidence of the answer it checks"


def test_the_read_question_opens_with_the_evidence_as_the_debaters_answer_does() -> None:
    from pipelines.prompts import load_prompt

    shown = "[E1] Masks: Masks cut transmission.\n[E2] Trials: Small trials found little effect."
    answer = load_prompt("toolmad_answer", "pipelines.protocols.toolmad").render(claim="c", role="r", tool="t", evidence=shown, debate="")
    read = load_prompt("faithfulness_read").render(evidence=shown, statement="s", options="A. [E1]")
    opening = f"Evidence:\n{shown}\n\n"
    assert str(answer[0].content).startswith(opening) and str(read[0].content).startswith(opening)


def test_the_judge_reads_the_items_the_debaters_cited() -> None:
    from pipelines.core.domain import Evidence, Turn
    from pipelines.protocols.toolmad.run import _argued_evidence

    items = [Evidence(id=f"E{n}", text=f"passage {n}", source="corpus") for n in range(1, 7)]
    turns = [
        Turn(id="RAG-r1", agent="RAG", round=1, text="a", cited=("E5", "E2")),
        Turn(id="Search-r1", agent="Search", round=1, text="b", cited=("E2",)),
    ]
    assert [e.id for e in _argued_evidence(items, turns)] == ["E2", "E5"], "in the order found, each once"
    uncited = [Turn(id="RAG-r1", agent="RAG", round=1, text="a"), Turn(id="Search-r1", agent="Search", round=1, text="b", cited=("E9",))]
    assert _argued_evidence(items, uncited) == items, "nothing of this evidence cited: the judge reads all of it"


def test_a_judged_debate_shows_the_judge_only_what_was_cited(services: Services) -> None:
    async def reviewer(number: int, next_queries: dict[str, str]) -> Review:
        return Review()

    events, verdict, chat = direct_run(services, AGREED, reviewer, early_stop=False, rounds=2)
    assert verdict.decided_by == "judge"
    cited = {c for e in of(events, ev.TurnCompleted) if e.turn.agent != "Judge" for c in e.turn.cited}
    judge = next(p for p in chat.prompts if "You are the judge" in p)
    shown = set(re.findall(r"^\[(E\d+)\]", judge.split("\nEvidence:\n", 1)[1].split("\nDebate:\n", 1)[0], flags=re.M))
    found = {i for p in chat.prompts if "Give your own argument" in p for i in re.findall(r"^\[(E\d+)\]", p, flags=re.M)}
    assert cited and shown == cited and found > cited, "the debaters argued from more than they cited"
