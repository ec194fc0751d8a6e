"""Which language a claim or a report is in: py3langid (langid.py's model, 97 languages, shipped inside the package, no
download), with its probabilities normalised so a short or mixed text can be left unknown rather than guessed.

A desk in two languages sorts and matches its claims by this; the person can always correct it.
"""

from __future__ import annotations

import functools
import re

MIN_PROBABILITY = 0.75  # below this the language is left unknown ("") for the person to set
# The languages a claim is told among: the model knows 97, many of them close kin of these (Extremaduran beside Spanish,
# Nigerian Pidgin beside English), which on a one-line claim take enough probability to leave even plain English unsure.
LANGUAGES = tuple(
    [
        "en",
        "es",
        "fr",
        "de",
        "pt",
        "it",
        "nl",
        "ru",
        "uk",
        "pl",
        "tr",
        "ar",
        "fa",
        "hi",
        "bn",
        "ur",
        "id",
        "ms",
        "vi",
        "th",
        "zh",
        "ja",
        "ko",
        "sw",
        "ro",
        "el",
        "cs",
        "sv",
        "da",
        "no",
        "fi",
        "hu",
        "he",
        "ta",
        "te",
        "ml",
        "mr",
        "tl",
        "ca",
        "hr",
        "sr",
        "bg",
        "sk",
    ]
)
MIN_LETTERS = 12  # fewer letters than this say too little ("5G", a name)
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$")  # an ISO 639 code, optionally with a region or script (BCP 47)


@functools.lru_cache(maxsize=1)
def _identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages([code for code in LANGUAGES if code in identifier.nb_classes])
    return identifier


def detect(text: str) -> str:
    """The text's language as an ISO 639-1 code ("en", "es"...), or "" when the text is too short or the model unsure."""
    if len(_LETTER.findall(text)) < MIN_LETTERS:
        return ""
    language, probability = _identifier().classify(text)
    return str(language) if float(probability) >= MIN_PROBABILITY else ""


def checked_code(code: str) -> str:
    """A language code a person typed, as stored (lower case), or ValueError saying what a code looks like."""
    code = code.strip()
    if not code:
        return ""
    if not CODE.match(code.lower()):
        raise ValueError(f"{code[:20]!r} is not a language code; use a two- or three-letter ISO 639 code such as en, es or fr")
    language, _, region = code.partition("-")
    return language.lower() + (f"-{region}" if region else "")
