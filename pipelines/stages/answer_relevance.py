"""Answer relevance (AR), built like a ragas metric: does an answer address the claim it was asked about?

Step 1 asks the scorer for n questions that the answer answers (it never sees the claim);
step 2 embeds the claim and the questions with the same MiniLM model as the evidence
index; step 3 takes AR = mean cosine(claim, question). An answer that drifts to another
subject yields questions about that subject, and a low AR.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, Field

from pipelines.prompts import load_prompt
from pipelines.run.llm.client import LLM
from pipelines.run.tools.embeddings import Embedder, cosine_matrix
from pipelines.stages.argument import strip_label_line


class GeneratedQuestions(BaseModel):
    """Step 1's answer: questions the answer answers."""

    questions: list[str] = Field(min_length=1, max_length=10)


@dataclass(frozen=True)
class AnswerRelevanceResult:
    """AR with the questions and similarities behind it, and a one-line reason."""

    value: float
    questions: tuple[str, ...]
    similarities: tuple[float, ...]
    reason: str


class AnswerRelevance:
    """AR of one answer to a claim. One public method: ``score``."""

    name = "AR"

    def __init__(self, llm: LLM, embedder: Embedder, *, questions: int = 3) -> None:
        self.llm = llm
        self.embedder = embedder
        self.n = questions

    async def score(self, claim: str, answer: str) -> AnswerRelevanceResult:
        """Generate, embed, average. Raises ModelOutputError or BackendUnavailableError when the scorer fails."""
        body = strip_label_line(answer)
        if not body.strip():
            return AnswerRelevanceResult(0.0, (), (), "the answer is empty")
        questions = await self._generate(body)
        if not questions:
            return AnswerRelevanceResult(0.0, (), (), "the scorer wrote no question for the answer")
        similarities = await self._similarities(claim, questions)
        return self._average(questions, similarities)

    async def _generate(self, answer: str) -> list[str]:
        """Step 1: up to n distinct questions the answer answers."""
        messages = load_prompt("answer_relevance_questions").render(answer=answer, n=self.n)
        result = await self.llm.structured(messages, GeneratedQuestions)
        cleaned = [" ".join(q.split()) for q in result.questions]
        return list(dict.fromkeys(q for q in cleaned if q))[: self.n]

    async def _similarities(self, claim: str, questions: list[str]) -> list[float]:
        """Step 2: cosine between the claim and each question (unit vectors, so a dot product)."""
        vectors = await asyncio.to_thread(self.embedder.embed, [claim, *questions])
        sims = cosine_matrix(vectors[:1], vectors[1:])[0]
        return [float(np.round(s, 4)) for s in sims]

    def _average(self, questions: list[str], similarities: list[float]) -> AnswerRelevanceResult:
        """Step 3: AR = mean cosine."""
        value = round(float(np.mean(similarities)), 4)
        short = f" (asked for {self.n})" if len(questions) < self.n else ""
        reason = f"mean cosine of the claim with {len(questions)} generated question(s){short}"
        return AnswerRelevanceResult(value, tuple(questions), tuple(similarities), reason)
