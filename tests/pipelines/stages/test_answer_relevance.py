"""Answer relevance on hand-made answers: known cosines with scripted questions, and the fake's questions."""

import json

import numpy as np
import pytest

from pipelines.run.llm.client import LLM
from pipelines.run.llm.fake import FakeChatModel
from pipelines.run.tools.embeddings import MiniLMEmbedder
from pipelines.stages.answer_relevance import AnswerRelevance

CLAIM = "Masks reduce transmission of respiratory viruses"


def scorer(**knobs: object) -> LLM:
    return LLM(FakeChatModel(**knobs), role="scorer", model_name="fake")


async def test_questions_that_restate_the_claim_give_relevance_one(embedder: MiniLMEmbedder) -> None:
    llm = scorer(script=[json.dumps({"questions": [CLAIM]})])
    result = await AnswerRelevance(llm, embedder, questions=1).score(CLAIM, "Masks cut spread.\nLabel: SUPPORTS")
    assert result.value == pytest.approx(1.0, abs=1e-3)


async def test_relevance_is_the_mean_cosine_of_claim_and_questions(embedder: MiniLMEmbedder) -> None:
    questions = ["Do face masks lower the spread of flu?", "Who won the 1998 football world cup?", "What is the boiling point of water?"]
    result = await AnswerRelevance(scorer(script=[json.dumps({"questions": questions})]), embedder).score(CLAIM, "Some answer.")
    vectors = embedder.embed([CLAIM, *questions])
    expected = float(np.mean(vectors[1:] @ vectors[0]))
    assert result.value == pytest.approx(expected, abs=1e-3)
    assert result.questions == tuple(questions) and len(result.similarities) == 3
    assert result.similarities[0] > 0.5 > max(result.similarities[1:])


async def test_only_n_distinct_questions_are_used(embedder: MiniLMEmbedder) -> None:
    questions = ["Do masks work?", "Do masks work?", "Do masks stop viruses?", "Is the sky blue?"]
    result = await AnswerRelevance(scorer(script=[json.dumps({"questions": questions})]), embedder, questions=2).score(CLAIM, "x.")
    assert result.questions == ("Do masks work?", "Do masks stop viruses?")


async def test_fake_questions_make_an_on_topic_answer_relevant_and_an_off_topic_one_not(embedder: MiniLMEmbedder) -> None:
    on_topic = (
        "Randomized trials found fewer infections among mask wearers [E1]. "
        "Taken together, the evidence supports the claim that masks reduce transmission of respiratory viruses.\nLabel: SUPPORTS"
    )
    off_topic = "The Apollo astronauts brought back 382 kilograms of lunar rock and soil [E2].\nLabel: NOT ENOUGH INFO"
    metric = AnswerRelevance(scorer(), embedder)
    relevant, drifting = await metric.score(CLAIM, on_topic), await metric.score(CLAIM, off_topic)
    assert len(relevant.questions) == 3
    assert relevant.value >= 0.8 > 0.5 > drifting.value


async def test_the_question_writer_never_sees_the_claim(embedder: MiniLMEmbedder) -> None:
    chat = FakeChatModel()
    seen: list[str] = []
    original = chat.reply

    def spy(messages, response_format=None):  # type: ignore[no-untyped-def]
        seen.append("\n".join(str(m.content) for m in messages))
        return original(messages, response_format)

    object.__setattr__(chat, "reply", spy)
    await AnswerRelevance(LLM(chat, role="scorer", model_name="fake"), embedder).score("Zebras sing opera", "Cats sleep a lot.")
    assert seen and all("Zebras" not in prompt for prompt in seen)


async def test_an_empty_answer_scores_zero_without_a_call(embedder: MiniLMEmbedder) -> None:
    chat = FakeChatModel()
    result = await AnswerRelevance(LLM(chat, role="scorer", model_name="fake"), embedder).score(CLAIM, "Label: SUPPORTS")
    assert result.value == 0.0 and chat.calls == 0
