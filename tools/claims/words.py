"""Content words of English text: lower-cased, stop words dropped, suffixes stemmed by rules."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+")
# "didn't" reads as "did not": the negation is a fact of the sentence.
_NOT = re.compile(r"n['’]t\b")

STOP_WORDS = frozenset(
    """
    a about above after again against all also although am among an and any are as at be
    became because become been before being below between both but by can could did do does
    doing down during each either else for from further had has have having he her here hers
    herself him himself his how however i if in into is it its itself just let may me might
    more most much must my myself of off on once only onto or other our ours ourselves out over
    own per same she should since so some such than that the their theirs them themselves then
    there these they this those though through thus to too toward towards under until up upon
    us very via was we were what when where whether which while who whom whose why will with
    within would yet you your yours yourself yourselves said says say according s t
    roughly approximately nearly almost around exactly precisely just each every
    """.split()
)
# Quantities are facts (tools.claims.facts), compared by value, not words.
NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    dozen hundred thousand million billion bn trillion
    """.split()
)
NEGATIONS = frozenset({"not", "no", "never", "cannot", "nor", "none", "nobody", "nothing"})

_STEMS: dict[str, str] = {}
_STEM_CACHE_SIZE = 200_000
# Longest suffix first; each rule keeps a stem of at least three letters.
_SUFFIXES = (
    ("ational", "ate"),
    ("ization", "ize"),
    ("fulness", "ful"),
    ("iveness", "ive"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ness", ""),
    ("ingly", ""),
    ("edly", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ers", ""),
    ("ors", ""),
    ("er", ""),
    ("or", ""),
    ("ed", ""),
    ("ly", ""),
    ("es", ""),
    ("s", ""),
)
_DOUBLE_OK = frozenset("lsz")


def _stem_uncached(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word[-2] in "su":
                continue
            word = word[: len(word) - len(suffix)] + replacement
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _DOUBLE_OK and word[-1].isalpha():
        word = word[:-1]
    if len(word) > 3 and word[-1] == "e":
        word = word[:-1]
    if len(word) > 3 and word[-1] == "y":
        word = word[:-1] + "i"
    return word


def stem(word: str) -> str:
    """Return the stem of a lower-case word: "founded", "founding" and "founds" give "found"."""
    found = _STEMS.get(word)
    if found is None:
        found = _stem_uncached(word)
        if len(_STEMS) >= _STEM_CACHE_SIZE:
            _STEMS.clear()
        _STEMS[word] = found
    return found


def lower_words(text: str) -> list[str]:
    """Return the words of ``text``, lower-cased, with "n't" read as "not"."""
    return WORD.findall(_NOT.sub(" not", text.lower()))


def content_stems(text: str) -> set[str]:
    """Return the stems of the words of ``text`` that carry content (no stop words, no numbers)."""
    return {
        stem(word)
        for word in lower_words(text)
        if word not in STOP_WORDS and word not in NUMBER_WORDS and not word.isdigit()
    }
