"""The facts of a sentence a reader would check: numbers, dates, names and negations.

A claim's facts are matched against a passage's: a number by its value (``1,200`` is ``1200``,
``1.2 million`` is ``1200000``, ``twelve`` is ``12``), a date by its fields (``3 March 2024``,
``March 3, 2024`` and ``2024-03-03`` are one date; a claim's ``March 2024`` matches it), a name
by each of its capitalised words, a negation by any negation in the passage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tools.claims.words import NEGATIONS, STOP_WORDS, lower_words

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<{}>(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?)"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>\d{{4}})"
DATE = re.compile(
    r"(?<![\w.])(?:"
    + r"(?P<iy>\d{4})-(?P<im>[01]\d)-(?P<id>[0-3]\d)"
    + "|"
    + _DAY.format("ad")
    + r"\s+(?:of\s+)?"
    + _MONTH.format("am")
    + r"(?:,?\s+"
    + _YEAR.format("ay")
    + ")?"
    + "|"
    + _MONTH.format("bm")
    + r"\s+"
    + _DAY.format("bd")
    + r"(?!\d)(?:,?\s+"
    + _YEAR.format("by")
    + ")?"
    + "|"
    + _MONTH.format("cm")
    + r"\s+(?:of\s+)?"
    + _YEAR.format("cy")
    + r")(?![\w])",
    re.IGNORECASE,
)
NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
        " fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "dozen": 12,
}
_SCALES = {
    "hundred": 100,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "bn": 10**9,
    "trillion": 10**12,
}
NUMBER = re.compile(
    r"(?<![\w.,])(?:(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?:st|nd|rd|th)?"
    r"|(?P<tens>twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ]"
    r"(?P<unit>one|two|three|four|five|six|seven|eight|nine)\b"
    r"|(?P<word>(?:" + "|".join(NUMBER_WORDS) + r")\b))"
    r"(?:\s?(?P<scale>" + "|".join(_SCALES) + r")\b)?",
    re.IGNORECASE,
)
NAME_TOKEN = re.compile(r"[^\W_]+(?:['’\-.][^\W_]+)*")


@dataclass(frozen=True)
class Date:
    """A date as written: any of its fields may be missing."""

    year: int | None
    month: int | None
    day: int | None


@dataclass(frozen=True)
class Facts:
    """What a claim asserts, or what a passage holds, in comparable form."""

    numbers: dict[float, str]  # value -> how the text wrote it
    dates: dict[Date, str]
    names: dict[tuple[str, ...], str]  # lower-case words of a name -> the name as written
    negated: bool
    words: frozenset[str]  # every lower-case word, for names to be found in
    sequence: tuple[str, ...] = ()  # a passage's words in order, for the acronyms they spell

    @property
    def count(self) -> int:
        """How many facts a passage must hold to support the claim."""
        return len(self.numbers) + len(self.dates) + len(self.names) + self.negated


NO_FACTS = Facts(numbers={}, dates={}, names={}, negated=False, words=frozenset())


def merge_facts(parts: list[Facts]) -> Facts:
    """Return the facts of consecutive sentences read as one passage."""
    if len(parts) == 1:
        return parts[0]
    return Facts(
        numbers={k: v for part in parts for k, v in part.numbers.items()},
        dates={k: v for part in parts for k, v in part.dates.items()},
        names={k: v for part in parts for k, v in part.names.items()},
        negated=any(part.negated for part in parts),
        words=frozenset().union(*(part.words for part in parts)),
        sequence=tuple(word for part in parts for word in part.sequence),
    )


def _number_value(match: re.Match[str]) -> float:
    if match["tens"]:
        value = float(NUMBER_WORDS[match["tens"].lower()] + NUMBER_WORDS[match["unit"].lower()])
    elif match["word"]:
        value = float(NUMBER_WORDS[match["word"].lower()])
    else:
        value = float(match["int"].replace(",", "") + ("." + (match["frac"] or "0")))
    if match["scale"]:
        value *= _SCALES[match["scale"].lower()]
    return round(value, 6)


def _dates(text: str) -> tuple[dict[Date, str], list[tuple[int, int]]]:
    dates: dict[Date, str] = {}
    spans = []
    for match in DATE.finditer(text):
        groups = {k[1]: v for k, v in match.groupdict().items() if v is not None}
        month = groups["m"].lower().rstrip(".")
        month_number = int(month) if month.isdigit() else MONTHS[month]
        day = int(groups["d"]) if "d" in groups else None
        if not 1 <= month_number <= 12 or (day is not None and not 1 <= day <= 31):
            continue
        year = int(groups["y"]) if "y" in groups else None
        dates[Date(year, month_number, day)] = match.group().strip()
        spans.append(match.span())
    return dates, spans


def _names(text: str) -> dict[tuple[str, ...], str]:
    """Capitalised words not opening the sentence (unless a name of several words opens it),
    acronyms and words with inner capitals or digits, grouped in runs."""
    names: dict[tuple[str, ...], str] = {}
    run: list[re.Match[str]] = []
    tokens = list(NAME_TOKEN.finditer(text))

    def close() -> None:
        if not run:
            return
        words = tuple(w for m in run for w in lower_words(m.group()) if w != "s")
        opens = run[0].start() == tokens[0].start()
        if not (opens and len(run) == 1 and not _is_odd_case(run[0].group())):
            names[words] = text[run[0].start() : run[-1].end()]
        run.clear()

    for token in tokens:
        word = token.group()
        lower = word.lower()
        if _is_name_word(word) and lower not in STOP_WORDS and lower.rstrip(".") not in MONTHS:
            if run and text[run[-1].end() : token.start()].strip() not in ("", "-"):
                close()
            run.append(token)
        else:
            close()
    close()
    return names


def _is_name_word(word: str) -> bool:
    # "32-bit" and "768-dimensional" are quantities: their number is checked as a number.
    return word[0].isupper() or (not word[0].isdigit() and _is_odd_case(word))


def _is_odd_case(word: str) -> bool:
    """An acronym (NASA), a word with an inner capital (iPhone) or letters and digits (F1)."""
    if word.isalpha() and word.islower():  # most words: read in C, not letter by letter
        return False
    letters = [ch for ch in word if ch.isalpha()]
    if not letters:
        return False
    inner_capital = any(ch.isupper() for ch in word[1:])
    has_digit = any(ch.isdigit() for ch in word)
    return inner_capital or (has_digit and len(letters) < len(word))


def find_facts(text: str, claim: bool, with_dates: bool = True) -> Facts:
    """Return the facts of ``text``; a claim's are what a passage must hold to support it.
    A passage read without dates (``with_dates`` false) still has their numbers."""
    dates, date_spans = _dates(text) if with_dates else ({}, [])
    numbers: dict[float, str] = {}
    for match in NUMBER.finditer(text):
        inside_date = any(start <= match.start() < end for start, end in date_spans)
        if inside_date and claim:
            continue
        value = _number_value(match)
        # "one" and "zero" are seldom quantities ("one of the", "zero in on") unless scaled.
        if claim and match["word"] and value < 2 and not match["scale"]:
            continue
        numbers.setdefault(value, match.group().strip())
    words = lower_words(text)
    return Facts(
        numbers=numbers,
        dates=dates,
        names=_names(text) if claim else {},
        negated=any(word in NEGATIONS for word in words),
        words=frozenset(words),
        sequence=() if claim else tuple(words),
    )


def _initials(words: list[str]) -> set[str]:
    """The acronyms the passage spells out: "European Space Agency" gives "esa", so a claim's
    ESA is found in it."""
    content = [word for word in words if word not in STOP_WORDS and not word.isdigit()]
    return {
        "".join(word[0] for word in content[start : start + size])
        for size in range(2, 6)
        for start in range(len(content) - size + 1)
    }


def _date_held(date: Date, passage: Facts) -> bool:
    for held in passage.dates:
        if date.month is not None and held.month != date.month:
            continue
        if date.day is not None and held.day != date.day:
            continue
        if date.year is not None and held.year != date.year:
            if held.year is not None or float(date.year) not in passage.numbers:
                continue
        return True
    # A bare year, or a month and year, may be written as a number in the passage.
    return date.month is None and date.day is None and float(date.year or -1) in passage.numbers


def _word_held(word: str, passage: Facts) -> bool:
    """A name's word is held as written; as a form that adds or drops up to three letters at
    its end (German and Germany); or, for an acronym, spelled out (ESA)."""
    words = passage.words
    if word in words:
        return True
    if len(word) >= 4:
        if any(word[:-cut] in words for cut in (1, 2, 3) if len(word) - cut >= 4):
            return True
        if any(other.startswith(word) and len(other) - len(word) <= 3 for other in words):
            return True
    return 2 <= len(word) <= 5 and word.isalpha() and word in _initials(passage.sequence)


def missing_facts(
    claim: Facts, passage: Facts, title: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """Return, as the claim wrote them, the facts of ``claim`` that ``passage`` does not hold.
    A name's words may be in the source's ``title`` instead: the subject a page names once in
    its title and then calls "the lake" or "the project"."""
    missing = [text for value, text in claim.numbers.items() if value not in passage.numbers]
    missing += [text for date, text in claim.dates.items() if not _date_held(date, passage)]
    missing += [
        text
        for words, text in claim.names.items()
        if not all(word in title or _word_held(word, passage) for word in words)
    ]
    if claim.negated and not passage.negated:
        missing.append("not")
    return tuple(missing)
