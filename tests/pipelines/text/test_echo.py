"""Telling a debate turn that repeats another nearly word for word from one that answers it."""

from pipelines.core.text.echo import echoes

SEARCH_R1 = (
    "Argument: The claim that children have the highest mortality rate among those who contract COVID-19 is not "
    "supported by the evidence provided. The evidence shows that the mortality rates among adults aged 25-44 are "
    "higher than among children, and that the mortality rates among nursing homes are higher than among adults.\n\n"
    "Label: REFUTES"
)
# what the embedded model wrote as toolmad's RAG debater in round 2 (Check-COVID dev), the same but for one word
RAG_R2 = SEARCH_R1.replace("provided", "given")
# an answer to it: the same claim and evidence, argued in other words
ANSWER = (
    "Argument: [E14] reports the infection fatality ratio is lowest among 5-9-year-olds and rises with age after 30, "
    "which is the opposite of the claim; my opponent is right that adults fare worse, and nothing here shows children "
    "dying at a higher rate.\n\nLabel: REFUTES"
)


def test_a_copy_with_a_word_changed_or_other_line_breaks_is_an_echo() -> None:
    assert echoes(RAG_R2, SEARCH_R1)
    assert echoes(SEARCH_R1.replace(" ", "\n", 5), SEARCH_R1)


def test_an_answer_on_the_same_claim_in_other_words_is_not() -> None:
    assert not echoes(ANSWER, SEARCH_R1)
    assert not echoes(SEARCH_R1[: len(SEARCH_R1) // 2], SEARCH_R1), "half of it is a quote, not the whole turn again"


def test_empty_text_echoes_nothing() -> None:
    assert not echoes("", SEARCH_R1) and not echoes(" ", " ")
