from pipelines.core.text.streamed import StreamedAgain


def test_chunks_already_shown_are_held_back_and_the_rest_goes_through() -> None:
    again = StreamedAgain("Masks reduce")
    assert [again.unseen(c) for c in ["Masks ", "red", "uce spr", "ead."]] == [None, None, " spr", "ead."]


def test_an_answer_that_differs_from_the_one_shown_is_kept_whole() -> None:
    again = StreamedAgain("Masks reduce")
    assert again.unseen("Masks ") is None
    assert again.unseen("do not") == "do not"
    assert again.unseen(" work") == " work", "past the shown part, everything is new"


def test_nothing_shown_lets_everything_through() -> None:
    again = StreamedAgain("")
    assert again.unseen("a") == "a" and again.unseen("") == ""
