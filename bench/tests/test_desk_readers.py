"""The desk readers bench: its extra questions read the claim and its opposite, the opposite's answers swapped back."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from typing import Any

from bench.desk_readers import passage_first_question, read_frame, truefalse_question
from pipelines.run.llm.client import Reply, TokenLogprob

CLAIM = "Masks reduce transmission"
OPPOSITE = "Masks do not reduce transmission"
LINE = "[E1] Masks: Trials found masks reduce transmission."
_OPTION = re.compile(r"^([ABC])\. (True|False|Not stated)", re.MULTILINE)


class ReadsTheClaim:
    """Answers "True" for the claim and "False" for its opposite, whichever letter either sits at."""

    model_name = "reads"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def reply(self, messages: Sequence[Any], **params: Any) -> Reply:
        text = "\n".join(str(m.content) for m in messages)
        self.prompts.append(text)
        right = "False" if OPPOSITE in text else "True"
        weights = {letter: (0.8 if word == right else 0.1) for letter, word in _OPTION.findall(text)}
        top = tuple((letter, math.log(w)) for letter, w in weights.items())
        best = max(top, key=lambda t: t[1])
        return Reply(text=best[0], tokens=(TokenLogprob(best[0], best[1], top),))


def test_a_passage_the_model_reads_as_saying_the_claim_supports_it_in_every_reading() -> None:
    model = ReadsTheClaim()
    readings = asyncio.run(read_frame(model, truefalse_question(LINE), CLAIM, OPPOSITE))  # type: ignore[arg-type]
    assert len(readings) == 6 and len(model.prompts) == 6
    assert all(max(r, key=r.__getitem__) == "SUPPORTS" for r in readings), "the opposite's 'false' counts as the claim's support"
    assert all(abs(sum(r.values()) - 1.0) < 1e-6 for r in readings)
    true_at = [dict((word, letter) for letter, word in _OPTION.findall(p))["True"] for p in model.prompts]
    assert sorted(true_at[:3]) == ["A", "B", "C"], "each answer takes each position once"


def test_passage_first_puts_the_passage_before_the_claim() -> None:
    messages = passage_first_question(LINE)(CLAIM, ("SUPPORTS", "REFUTES", "UNRELATED"))
    question = str(messages[-1].content)
    assert question.index(LINE) < question.index(CLAIM) < question.index("A. The passage supports the claim.")
