"""The labelled claims of the citation-check benchmark: written ones and altered copies.

Each article in ``bench/data/claims/<name>.md`` comes with ``<name>.json``: its split ("dev",
used while the rules were tuned, or "held-out", written after) and claims written by hand, each
of a kind (``KINDS``). Beside them, every sentence of the article is a copy (supported) and,
where it has one, is altered by rule: a number changed, a date or year swapped, a name replaced
by another name of the same article (not supported). The alterations use regular expressions
of their own, not the checker's, so the benchmark does not grade the checker by itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "claims"
SUPPORTED_KINDS = ("copied", "reordered", "paraphrased")
UNSUPPORTED_KINDS = ("number_changed", "date_swapped", "name_swapped", "other_page", "half_made")
ALTERED_FACT_KINDS = ("number_changed", "date_swapped", "name_swapped")
KINDS = SUPPORTED_KINDS + UNSUPPORTED_KINDS

MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()
_SENTENCE = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bSt\.)(?<=[.!?])\s+(?=[A-Z\"“])")
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_DAY_MONTH = re.compile(r"\b([0-9]{1,2}) (" + "|".join(MONTH_NAMES) + r")\b")
_NUMBER = re.compile(r"(?<![\w.,])([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(\.[0-9]+)?(?![\w])")
_WORD_NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NAME = re.compile(r"\b[A-Z][a-zà-ÿ]+(?: (?:of |de )?[A-Z][a-zà-ÿ]+)*")
_NOT_NAMES = frozenset(MONTH_NAMES) | frozenset(
    "Sunday Monday Tuesday Wednesday Thursday Friday Saturday I Dr Mr Professor".split()
)


@dataclass(frozen=True)
class Case:
    """One claim to cite against its article, with what it is and whether the article backs it."""

    article: str
    split: str
    kind: str
    text: str

    @property
    def supported(self) -> bool:
        """Whether the article supports the claim."""
        return self.kind in SUPPORTED_KINDS


def sentences(article: str) -> list[str]:
    """Return the article's sentences, headings and table rules left out; a list item or a
    table row is one sentence."""
    found = []
    for paragraph in article.split("\n\n"):
        if not paragraph.strip() or paragraph.startswith("#"):
            continue
        lines = paragraph.splitlines()
        if all(line.startswith(("- ", "|")) for line in lines[1:]) and len(lines) > 1:
            found += [line for line in lines if line.strip() and not line.startswith("| ---")]
            continue
        found += [s for s in _SENTENCE.split(" ".join(paragraph.split())) if s]
    return found


def change_number(sentence: str) -> str | None:
    """Return the sentence with its first number that is not a year or day changed by a quarter."""
    for match in _NUMBER.finditer(sentence):
        if _YEAR.fullmatch(match.group()) or _DAY_MONTH.match(sentence, match.start()):
            continue
        whole = int(match.group(1).replace(",", ""))
        changed = whole + max(1, round(whole / 4))
        text = f"{changed:,}" if "," in match.group(1) else str(changed)
        return sentence[: match.start()] + text + (match.group(2) or "") + sentence[match.end() :]
    for word in _WORD_NUMBERS:
        found = re.search(rf"\b{word}\b", sentence)
        if found:
            other = _WORD_NUMBERS[(_WORD_NUMBERS.index(word) + 2) % len(_WORD_NUMBERS)]
            return sentence[: found.start()] + other + sentence[found.end() :]
    return None


def swap_date(sentence: str) -> str | None:
    """Return the sentence with its first day of a month moved by nine, or else its first year
    moved back by four."""
    day = _DAY_MONTH.search(sentence)
    if day:
        moved = (int(day.group(1)) + 8) % 28 + 1
        return sentence[: day.start(1)] + str(moved) + sentence[day.end(1) :]
    year = _YEAR.search(sentence)
    if year:
        return sentence[: year.start()] + str(int(year.group()) - 4) + sentence[year.end() :]
    return None


def names(text: str) -> list[str]:
    """Return the capitalised names of ``text`` that do not open a sentence, each once."""
    found = [
        m.group()
        for m in _NAME.finditer(text)
        if m.group() not in _NOT_NAMES and re.search(r"[a-z,;] $", text[: m.start()])
    ]
    return list(dict.fromkeys(found))


def swap_name(sentence: str, others: list[str]) -> str | None:
    """Return the sentence with its first name replaced by the next of ``others`` it lacks that
    has as many words."""
    own = names(sentence)
    if not own:
        return None
    start = others.index(own[0]) if own[0] in others else 0
    for offset in range(1, len(others) + 1):
        other = others[(start + offset) % len(others)]
        if len(other.split()) != len(own[0].split()):
            continue
        if not any(word in sentence for word in other.split()):
            return sentence.replace(own[0], other, 1)
    return None


def load_cases(split: str | None = None) -> list[Case]:
    """Return every case of every article, or those of one split, in a fixed order."""
    cases = []
    for path in sorted(DATA.glob("*.md")):
        label = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
        if split is not None and label["split"] != split:
            continue
        article = path.read_text(encoding="utf-8")
        article_names = sorted(names(article))

        def add(kind: str, text: str | None) -> None:
            if text is not None:
                cases.append(Case(path.stem, label["split"], kind, text))  # noqa: B023

        for sentence in sentences(article):
            add("copied", sentence)
            add("number_changed", change_number(sentence))
            add("date_swapped", swap_date(sentence))
            add("name_swapped", swap_name(sentence, article_names))
        for written in label["cases"]:
            assert written["kind"] in KINDS, written
            add(written["kind"], written["text"])
    return cases


def article_text(name: str) -> str:
    """Return the text of the article ``name``."""
    return (DATA / f"{name}.md").read_text(encoding="utf-8")
