"""The Porter (1980) stemmer, so lexical search matches "vaccines" with "vaccinated".

PyStemmer and NLTK are not among the app's dependencies; the algorithm is short and fixed,
so it lives here. It follows M. F. Porter, "An algorithm for suffix stripping" (1980),
with the published errata (e.g. step 1b's "*d and not (*L or *S or *Z)").
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: how many vowel-consonant sequences the stem has."""
    m, i, n = 0, 0, len(stem)
    while i < n and _is_consonant(stem, i):
        i += 1
    while i < n:
        while i < n and not _is_consonant(stem, i):
            i += 1
        if i >= n:
            break
        while i < n and _is_consonant(stem, i):
            i += 1
        m += 1
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (e.g. hop, not snow)."""
    n = len(word)
    return n >= 3 and _is_consonant(word, n - 1) and not _is_consonant(word, n - 2) and _is_consonant(word, n - 3) and word[-1] not in "wxy"


def _replace(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


def _longest_match(word: str, rules: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    best = None
    for suffix, replacement in rules:
        if word.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, replacement)
    return best


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The Porter stem of a lowercase word; words of one or two letters are kept as they are."""
    if len(word) <= 2 or not word.isalpha():
        return word
    # Step 1a: plurals.
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("ss"):
        pass
    elif word.endswith("s"):
        word = word[:-1]
    # Step 1b: -ed and -ing.
    extra = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif word.endswith("ed") and _has_vowel(word[:-2]):
        word, extra = word[:-2], True
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        word, extra = word[:-3], True
    if extra:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif _ends_double_consonant(word) and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _cvc(word):
            word += "e"
    # Step 1c: y -> i after a vowel in the stem.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    # Step 2 and 3: double and single suffixes, when the stem is long enough.
    match = _longest_match(word, _STEP2)
    if match:
        word = _replace(word, (match,), 0)
    match = _longest_match(word, _STEP3)
    if match:
        word = _replace(word, (match,), 0)
    # Step 4: drop a suffix from a long stem.
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if word.endswith(suffix):
            stem_ = word[: len(word) - len(suffix)]
            if _measure(stem_) > 1 and (suffix != "ion" or stem_.endswith(("s", "t"))):
                word = stem_
            break
    # Step 5: a final -e, and -ll.
    if word.endswith("e"):
        stem_ = word[:-1]
        m = _measure(stem_)
        if m > 1 or (m == 1 and not _cvc(stem_)):
            word = stem_
    if _measure(word) > 1 and _ends_double_consonant(word) and word.endswith("l"):
        word = word[:-1]
    return word
