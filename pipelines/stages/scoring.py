"""Scoring stage: faithfulness and answer relevance of one answer, computed concurrently and emitted as events.

Any protocol can call ``score_answer`` after a turn. Each metric lands as a
ScoreComputed event (F after one StatementChecked per statement); a metric whose model
call fails becomes a StageFailed event and a missing score, which never passes its
threshold.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pipelines.core.config import RunConfig
from pipelines.core.domain import Evidence, Turn
from pipelines.core.errors import DebateDeskError
from pipelines.core.events import ScoreComputed, StageFailed, StatementChecked
from pipelines.protocols.base import find_protocol
from pipelines.run.context import RunContext
from pipelines.stages.answer_relevance import AnswerRelevance, AnswerRelevanceResult
from pipelines.stages.faithfulness import Faithfulness, FaithfulnessResult
from pipelines.stages.faithfulness import Reader as FaithfulnessReader


@dataclass(frozen=True)
class Thresholds:
    faithfulness: float = 0.7
    relevance: float = 0.5  # MiniLM's scale, not the paper's 0.8 on OpenAI's embeddings: toolmad's settings say why


@dataclass(frozen=True)
class AnswerScores:
    """An answer's F and AR; ``None`` where the metric could not be computed."""

    turn_id: str
    faithfulness: FaithfulnessResult | None
    relevance: AnswerRelevanceResult | None

    @property
    def f(self) -> float | None:
        return self.faithfulness.value if self.faithfulness else None

    @property
    def ar(self) -> float | None:
        return self.relevance.value if self.relevance else None

    def passes(self, thresholds: Thresholds) -> bool:
        """Both scores exist and meet their thresholds (a failed score never passes)."""
        return self.f is not None and self.ar is not None and self.f >= thresholds.faithfulness and self.ar >= thresholds.relevance


def reads_faithfulness(config: RunConfig) -> bool:
    """Whether this run's scorer answers are read from token probabilities (its embedded server must keep them)."""
    protocol = find_protocol(config.protocol)  # one whose answers are scored (F and AR) says so in its declaration
    return protocol is not None and protocol.scored_answers and getattr(config, protocol.name).faithfulness_reader == "read"


async def score_answer(
    ctx: RunContext,
    turn: Turn,
    evidence: list[Evidence],
    *,
    thresholds: Thresholds,
    max_statements: int = 8,
    questions: int = 3,
    evidence_chars: int = 700,
    reader: FaithfulnessReader = "generated",
    role: str = "scorer",
) -> AnswerScores:
    """F against ``evidence`` and AR against the claim, both at once; each emitted as it is ready."""
    llm = ctx.llm(role)
    faithfulness = Faithfulness(llm, max_statements=max_statements, evidence_chars=evidence_chars, reader=reader)
    relevance = AnswerRelevance(llm, ctx.tools.embedder, questions=questions)
    where = f"{turn.agent} round {turn.round}" if turn.round else turn.agent

    async def run_f() -> FaithfulnessResult | None:
        try:
            result = await faithfulness.score(ctx.claim.text, turn.text, evidence)
        except DebateDeskError as exc:
            ctx.emit(StageFailed(stage=f"{where} faithfulness", reason=f"{exc}; the answer counts as not passing F"))
            return None
        for s in result.statements:
            ctx.emit(StatementChecked(turn_id=turn.id, statement=s.text, supported=s.supported, evidence_id=s.evidence_id))
        ctx.emit(ScoreComputed(target=turn.id, metric="F", value=result.value, threshold=thresholds.faithfulness, detail=result.reason))
        return result

    async def run_ar() -> AnswerRelevanceResult | None:
        try:
            result = await relevance.score(ctx.claim.text, turn.text)
        except DebateDeskError as exc:
            ctx.emit(StageFailed(stage=f"{where} answer relevance", reason=f"{exc}; the answer counts as not passing AR"))
            return None
        questions_text = " | ".join(f"{q} ({s:.2f})" for q, s in zip(result.questions, result.similarities, strict=True))
        detail = f"{result.reason}: {questions_text}" if questions_text else result.reason
        ctx.emit(ScoreComputed(target=turn.id, metric="AR", value=result.value, threshold=thresholds.relevance, detail=detail))
        return result

    f_result, ar_result = await asyncio.gather(run_f(), run_ar())
    return AnswerScores(turn_id=turn.id, faithfulness=f_result, relevance=ar_result)
