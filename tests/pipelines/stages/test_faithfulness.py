"""Faithfulness on hand-made answers and evidence, with the fake's responders and with scripted replies."""

import json
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from pydantic import Field

from pipelines.core.domain import Evidence
from pipelines.core.errors import ModelOutputError
from pipelines.core.events import ModelCallCompleted
from pipelines.run.llm.client import LLM
from pipelines.run.llm.fake import FakeChatModel
from pipelines.stages.faithfulness import Faithfulness, answer_paragraphs, normalize_evidence_id, place_statements

CLAIM = "Masks reduce transmission of respiratory viruses"
EVIDENCE = [
    Evidence(id="E1", source="corpus", text="Randomized trials found that masks reduce transmission of respiratory viruses in households."),
    Evidence(id="E2", source="corpus", text="Surgical masks filter a large share of exhaled particles in laboratory tests."),
]


class Spy(FakeChatModel):
    """The fake, keeping each prompt it is sent (as one text) in ``seen``."""

    seen: list[str] = Field(default_factory=list)

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append("\n".join(str(m.content) for m in messages))
        return await super()._agenerate(messages, *args, **kwargs)


def scorer(**knobs: object) -> LLM:
    return LLM(FakeChatModel(**knobs), role="scorer", model_name="fake")


async def test_supported_and_unsupported_statements_give_their_share() -> None:
    answer = (
        "Randomized trials found that masks reduce transmission of respiratory viruses in households [E1]. "
        "The Moon landings were staged in a film studio in Nevada [E2].\nLabel: SUPPORTS"
    )
    result = await Faithfulness(scorer()).score(CLAIM, answer, EVIDENCE)
    assert result.value == 0.5
    assert [(s.supported, s.evidence_id) for s in result.statements] == [(True, "E1"), (False, None)]
    assert "Label" not in " ".join(s.text for s in result.statements), "the label line is not a statement"
    assert result.reason == "1 of 2 statements supported by the evidence"


async def test_an_answer_that_copies_its_evidence_is_fully_faithful() -> None:
    answer = "Surgical masks filter a large share of exhaled particles in laboratory tests [E2].\nLabel: SUPPORTS"
    result = await Faithfulness(scorer()).score(CLAIM, answer, EVIDENCE)
    assert result.value == 1.0 and result.statements[0].evidence_id == "E2"


async def test_scripted_verdicts_count_only_support_from_the_given_evidence() -> None:
    statements = {"statements": ["a is b", "c is d", "e is f", "g is h", "i is j", "k is l [E1]", "m is n [E7]"]}
    verdicts = {
        "verdicts": [
            {"statement": 1, "evidence_id": "E1", "supported": True},
            {"statement": 2, "evidence_id": "[e2]", "supported": True},
            {"statement": 3, "evidence_id": "E9", "supported": True},
            {"statement": 4, "evidence_id": "", "supported": False},
            {"statement": 6, "evidence_id": "", "supported": True},
            {"statement": 7, "evidence_id": "", "supported": True},
        ]
    }
    llm = scorer(script=[json.dumps(statements), json.dumps(verdicts)])
    result = await Faithfulness(llm).score(CLAIM, "Some answer.", EVIDENCE)
    assert result.value == pytest.approx(3 / 7, abs=1e-4)
    notes = [s.note for s in result.statements]
    assert "not in this answer's evidence" in notes[2]
    assert notes[4] == "the scorer gave no verdict"
    assert result.statements[1].evidence_id == "E2"
    assert result.statements[5].evidence_id == "E1", "no id in the verdict: the statement's own citation is used"
    assert not result.statements[6].supported and notes[6] == "no evidence named", "its citation is not this answer's evidence"


async def test_statements_are_capped_and_deduplicated() -> None:
    llm = scorer(script=[json.dumps({"statements": ["x one", "x one", "y two", "z three"]}), json.dumps({"verdicts": []})])
    result = await Faithfulness(llm, max_statements=2).score(CLAIM, "An answer.", EVIDENCE)
    assert [s.text for s in result.statements] == ["x one", "y two"]


async def test_no_evidence_means_nothing_is_supported_without_asking_for_verdicts() -> None:
    chat = FakeChatModel()
    result = await Faithfulness(LLM(chat, role="scorer", model_name="fake")).score(CLAIM, "Masks work.\nLabel: SUPPORTS", [])
    assert result.value == 0.0 and chat.calls == 1
    assert "no evidence" in result.reason


async def test_an_answer_with_only_a_label_has_no_statements() -> None:
    chat = FakeChatModel()
    result = await Faithfulness(LLM(chat, role="scorer", model_name="fake")).score(CLAIM, "Label: SUPPORTS", EVIDENCE)
    assert result.value == 0.0 and result.statements == () and chat.calls == 0


async def test_malformed_scorer_output_raises_for_the_stage_to_report() -> None:
    with pytest.raises(ModelOutputError, match="AnswerStatements"):
        await Faithfulness(scorer(malformed=5)).score(CLAIM, "Masks work.", EVIDENCE)


@pytest.mark.parametrize(("raw", "expected"), [("E3", "E3"), ("[E3]", "E3"), ("e3", "E3"), ("3", "E3"), ("evidence", None), (None, None)])
def test_evidence_ids_are_normalized(raw: str | None, expected: str | None) -> None:
    assert normalize_evidence_id(raw) == expected


class RecordingFake(FakeChatModel):
    """The fake scorer, keeping each structured request's JSON schema."""

    schemas: list[dict[str, Any]] = Field(default_factory=list)

    def _answer(self, messages: list[BaseMessage], params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if "response_format" in params:
            self.schemas.append(params["response_format"]["json_schema"]["schema"])
        return super()._answer(messages, params)


async def test_the_verdict_request_requires_an_evidence_id_so_a_grammar_cannot_drop_it() -> None:
    # Qwen2.5-1.5B under llama.cpp's grammar answered {"statement": 1, "supported": true} while
    # evidence_id was optional: every statement then counted as unsupported (F = 0 on every answer).
    chat = RecordingFake()
    answer = "Surgical masks filter a large share of exhaled particles in laboratory tests [E2].\nLabel: SUPPORTS"

    result = await Faithfulness(LLM(chat, role="scorer", model_name="fake")).score(CLAIM, answer, EVIDENCE)

    verdict_schema = chat.schemas[1]["$defs"]["StatementVerdict"]
    assert verdict_schema["required"] == ["statement", "evidence_id", "supported"]
    assert result.value == 1.0


def test_an_answer_is_split_into_sentences_with_each_citation_kept_on_its_own_sentence() -> None:
    answer = "Masks filter droplets. [E1] Trials were small. [E2][E3]\n\nSo the claim holds."
    assert answer_paragraphs(answer) == [["Masks filter droplets. [E1]", "Trials were small. [E2][E3]"], ["So the claim holds."]]
    # Seen on the embedded model: the citation is the subject of the sentence it opens, not the last word of the one before.
    subject = "The evidence supports it. [E26] indicates that cases did not rise. [E6] also supports it. [E7] Trials agree."
    assert answer_paragraphs(subject) == [
        ["The evidence supports it.", "[E26] indicates that cases did not rise.", "[E6] also supports it. [E7]", "Trials agree."]
    ]


def test_statements_are_placed_in_the_sentence_they_came_from_or_nowhere() -> None:
    sentences = ["Masks filter droplets. [E1]", "Trials were small and short. [E2]", "So the claim holds."]
    statements = ["Trials of masks were small", "Masks filter respiratory droplets", "Vaccines work", "It is."]
    assert place_statements(sentences, statements) == [1, 0, None, None]


# --- the read reader: sentences as statements, one letter a statement ---------------------------


async def test_the_read_reader_checks_each_sentence_against_the_evidence_with_one_letter() -> None:
    answer = (
        "Randomized trials found that masks reduce transmission of respiratory viruses in households [E1]. "
        "I agree. The Moon landings were staged in a film studio in Nevada [E2].\nLabel: SUPPORTS"
    )
    calls: list[ModelCallCompleted] = []
    llm = LLM(FakeChatModel(), role="scorer", model_name="fake", on_call=calls.append)
    result = await Faithfulness(llm, reader="read").score(CLAIM, answer, EVIDENCE)
    assert [s.text for s in result.statements] == [
        "Randomized trials found that masks reduce transmission of respiratory viruses in households [E1].",
        "The Moon landings were staged in a film studio in Nevada [E2].",
    ], "each sentence of three content words or more is a statement; the label line and 'I agree.' are not"
    assert [(s.supported, s.evidence_id) for s in result.statements] == [(True, "E1"), (False, None)]
    assert result.value == 0.5
    assert [c.tokens_out for c in calls] == [1, 1], "one call a statement, one token written each"
    assert result.reason.startswith("1 of 2 statements supported by the evidence (each of the answer's sentences asked which item")


async def test_the_read_question_hides_the_statements_own_citation_and_names_every_item() -> None:
    spy = Spy()
    seen = spy.seen
    llm = LLM(spy, role="scorer", model_name="fake")
    await Faithfulness(llm, reader="read").score(CLAIM, "Surgical masks filter exhaled particles in laboratory tests [E2].", EVIDENCE)
    (question,) = seen
    assert "Statement: Surgical masks filter exhaled particles in laboratory tests." in question
    assert "A. [E1]\nB. [E2]\nC. none of them\nOptions: A | B | C" in question


async def test_a_read_statement_rests_on_the_item_the_likeliest_letter_names() -> None:
    from pipelines.stages.faithfulness import read_verdict
    from pipelines.stages.label_probability import LabelDistribution

    def read(probabilities: dict[str, float]) -> LabelDistribution:
        return LabelDistribution(probabilities, "logprobs")

    assert read_verdict(1, read({"A": 0.2, "B": 0.7, "C": 0.1}), EVIDENCE, "ABC").evidence_id == "E2"
    none = read_verdict(2, read({"A": 0.3, "B": 0.1, "C": 0.6}), EVIDENCE, "ABC")
    assert not none.supported and none.evidence_id == ""


# --- the sentences reader: the answer's sentences as statements, one JSON call of verdicts -----------


async def test_the_sentences_reader_asks_one_call_of_verdicts_on_the_answers_own_sentences() -> None:
    answer = (
        "Randomized trials found that masks reduce transmission of respiratory viruses in households [E1]. "
        "I agree. The Moon landings were staged in a film studio in Nevada [E2].\nLabel: SUPPORTS"
    )
    spy = Spy()
    seen = spy.seen
    calls: list[ModelCallCompleted] = []
    llm = LLM(spy, role="scorer", model_name="fake", on_call=calls.append)
    result = await Faithfulness(llm, reader="sentences").score(CLAIM, answer, EVIDENCE)
    assert [s.text for s in result.statements] == [
        "Randomized trials found that masks reduce transmission of respiratory viruses in households [E1].",
        "The Moon landings were staged in a film studio in Nevada [E2].",
    ], "the statements are the answer's sentences, as the read reader takes them: no call writes them"
    assert len(calls) == 1 and len(seen) == 1, "one call: the verdicts"
    assert "S1: Randomized trials found that masks reduce transmission of respiratory viruses in households." in seen[0]
    assert "[E2]." not in seen[0].split("Statements:")[1], "a statement's own citation is not shown to the scorer"
    assert [(s.supported, s.evidence_id) for s in result.statements] == [(True, "E1"), (False, None)]
    assert result.reason == "1 of 2 statements supported by the evidence (the answer's sentences, each given a verdict by the scorer)"


async def test_a_sentences_verdict_without_an_id_takes_the_sentences_own_citation_when_it_is_this_evidence() -> None:
    verdicts = {
        "verdicts": [
            {"statement": 1, "evidence_id": "", "supported": True},
            {"statement": 2, "evidence_id": "", "supported": True},
        ]
    }
    answer = "Masks cut household spread of respiratory viruses [E1]. Masks cut spread on every ferry in Norway [E7]."
    result = await Faithfulness(scorer(script=[json.dumps(verdicts)]), reader="sentences").score(CLAIM, answer, EVIDENCE)
    assert [(s.supported, s.evidence_id) for s in result.statements] == [(True, "E1"), (False, None)]
