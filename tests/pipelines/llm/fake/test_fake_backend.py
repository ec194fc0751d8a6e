import json

from langchain_core.messages import HumanMessage

from pipelines.run.llm.client import response_format_for
from pipelines.run.llm.fake import FakeChatModel, PromptView, overlap
from pipelines.stages.schemas import SearchQueries


def prompt(claim: str, *evidence: str) -> list[HumanMessage]:
    lines = [f"Claim: {claim}", "Evidence:"] + [f"[E{i}] {text}" for i, text in enumerate(evidence, start=1)]
    return [HumanMessage(content="\n".join(lines))]


def test_label_follows_overlap_and_negation() -> None:
    assert PromptView.parse(prompt("Masks reduce virus transmission", "Masks reduce virus transmission in trials.")).label() == "SUPPORTS"
    assert PromptView.parse(prompt("Masks reduce virus transmission", "Masks do not reduce virus transmission.")).label() == "REFUTES"
    assert PromptView.parse(prompt("Masks reduce virus transmission", "The Eiffel Tower grows in summer.")).label() == "NOT ENOUGH INFO"


def test_answers_are_deterministic() -> None:
    messages = prompt("Lightning never strikes twice", "Lightning often strikes the same tall building many times.")
    assert FakeChatModel().invoke(messages).content == FakeChatModel().invoke(messages).content


def test_structured_answer_is_schema_valid() -> None:
    reply = FakeChatModel().invoke(prompt("Masks reduce virus transmission"), response_format=response_format_for(SearchQueries))
    parsed = SearchQueries.model_validate(json.loads(str(reply.content)))
    assert "masks" in parsed.queries[0]


def test_overlap_counts_content_words_only() -> None:
    assert overlap("the masks", "masks") == 1.0
    assert overlap("", "anything") == 0.0
