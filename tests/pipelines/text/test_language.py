"""A claim's language: told where the text says enough, left unknown ("") where it does not, a typed code checked."""

import pytest

from pipelines.core.text.language import checked_code, detect


@pytest.mark.parametrize(
    "text,code",
    [
        ("Masks reduce transmission of respiratory viruses", "en"),
        ("Las mascarillas reducen la transmisión de virus respiratorios", "es"),
        ("A vacina causa autismo em crianças", "pt"),
        ("Der Klimawandel ist eine Erfindung der Chinesen", "de"),
        ("5G", ""),
        ("Obama", ""),
        ("Vaccines cause autism", ""),  # three words the model reads as French as readily: unknown, for the person to set
    ],
)
def test_the_language_is_told_or_left_unknown(text: str, code: str) -> None:
    assert detect(text) == code


def test_a_typed_code_is_checked_and_kept_in_its_usual_case() -> None:
    assert checked_code(" EN ") == "en" and checked_code("pt-BR") == "pt-BR" and checked_code("") == ""
    with pytest.raises(ValueError, match="not a language code"):
        checked_code("English")
