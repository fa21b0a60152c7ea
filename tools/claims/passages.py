"""Finds the passage of a source that best supports a claim: a window of one to three sentences.

A source is cut into sentences once per answer (``SourceIndex``); a claim's content stems are
looked up in it with ``str.find`` (a stem is a prefix of its words), weighted by how rare they
are among the source's sentences (inverse document frequency). The windows around the sentences
that share the most weight are ranked by the weight they share, and the best few by the share
of the claim's facts they hold too.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from tools.claims.facts import Facts, find_facts, merge_facts, missing_facts
from tools.claims.markers import sentence_ends, trim_span
from tools.claims.words import WORD, stem

MAX_SOURCE_CHARS = 200_000
MAX_SENTENCES = 5_000
MAX_SENTENCE_CHARS = 600
CANDIDATES = 4
# The source's first sentence, its title in a stored page, is read up to this length for names.
TITLE_CHARS = 300
SHORTLIST = 4
# Occurrences of one stem looked at in one source: a page that repeats a word is read no further.
MAX_HITS = 2_000
MAX_WINDOW = 3
# A window of several sentences must earn its length: each extra sentence costs this much rank.
_LENGTH_COST = 0.03
_FACT_WEIGHT = 0.5


@dataclass(frozen=True)
class Passage:
    """The best window for a claim and how well it supports it."""

    span: tuple[int, int]
    coverage: float  # share of the claim's content stems (weighted by rarity) the window holds
    missing: tuple[str, ...]
    facts_held: int  # how many of the claim's facts the window holds


class SourceIndex:
    """One source's text, cut into sentences once per answer; words are looked up as asked."""

    def __init__(self, text: str) -> None:
        # A tool's output may be stored as JSON: its escaped line breaks and quotes are read as
        # what they stand for, in as many characters, so offsets stay those of the stored text.
        text = text[:MAX_SOURCE_CHARS]
        if "\\" in text:  # one scan, where most pages need none of the three replacements
            text = text.replace("\\n", " \n").replace('\\"', ' "').replace("\\t", "  ")
        self.text = text
        lowered = self.text.lower()
        if len(lowered) != len(self.text):  # a few letters grow when lower-cased (İ)
            lowered = "".join(ch.lower()[0] for ch in self.text)
        self.lowered = lowered
        self.spans = _sentence_spans(self.text)
        self.starts = [start for start, _ in self.spans]
        opening = next((span for span in self.spans if self.text[span[0] : span[1]].strip()), None)
        self.title = (
            frozenset(WORD.findall(lowered, opening[0], min(opening[1], opening[0] + TITLE_CHARS)))
            if opening
            else frozenset()
        )
        self._facts: dict[tuple[int, bool], Facts] = {}

    def sentences_with(self, stem_: str) -> set[int]:
        """Return the sentences that hold a word of stem ``stem_`` (the first ``MAX_HITS``)."""
        # A stem is a prefix of its words, but for a final "i" that stands for "y" or "ie".
        key = stem_[:-1] if stem_.endswith("i") and len(stem_) > 3 else stem_
        found: set[int] = set()
        lowered, position, hits = self.lowered, 0, 0
        while hits < MAX_HITS:
            position = lowered.find(key, position)
            if position < 0:
                break
            hits += 1
            if position and lowered[position - 1].isalnum():
                position += len(key)
                continue
            word = WORD.match(lowered, position)
            position += len(key)
            if word and stem(word.group()) == stem_:
                index = bisect.bisect_right(self.starts, word.start()) - 1
                if index >= 0 and word.start() < self.spans[index][1]:
                    found.add(index)
        return found

    def find_passage(self, stems: set[str], facts: Facts) -> Passage | None:
        """Return the window that best supports a claim of ``stems`` and ``facts``, or None
        when no sentence shares a content word with it."""
        matched: dict[int, set[str]] = {}
        counts: dict[str, int] = {}
        for s in stems:
            where = self.sentences_with(s)
            counts[s] = len(where)
            for index in where:
                matched.setdefault(index, set()).add(s)
        if not matched:
            return None
        total = len(self.spans) + 1
        weight = {s: math.log(1 + total / (counts[s] + 0.5)) for s in stems}
        whole = sum(weight.values()) or 1.0
        windows = self._windows(matched, weight, whole, facts)
        shortlist = sorted(windows, key=lambda w: -windows[w])[:SHORTLIST]
        best: tuple[float, Passage] | None = None
        for first, last in shortlist:
            if best is not None and windows[first, last] + _FACT_WEIGHT <= best[0]:
                break  # the shortlist falls in rank: even holding every fact, none can win
            shared = set().union(*(matched.get(i, ()) for i in range(first, last + 1)))
            candidate = self._passage(first, last, shared, weight, whole, facts)
            held = candidate.facts_held / facts.count if facts.count else 1.0
            rank = windows[first, last] + _FACT_WEIGHT * held
            if best is None or rank > best[0]:
                best = (rank, candidate)
        return best[1] if best else None

    def _windows(
        self,
        matched: dict[int, set[str]],
        weight: dict[str, float],
        whole: float,
        facts: Facts,
    ) -> dict[tuple[int, int], float]:
        """Rank by shared words alone the windows around the best sentences; the claim's facts
        are looked for in the best few only (reading a sentence's facts is the dear part)."""
        best_sentences = sorted(matched, key=lambda i: -sum(weight[s] for s in matched[i]))
        named = {stem(word) for words in facts.names for word in words}
        windows: dict[tuple[int, int], float] = {}
        for centre in best_sentences[:CANDIDATES]:
            for first in range(max(0, centre - MAX_WINDOW + 1), centre + 1):
                for last in range(centre, min(len(self.spans), first + MAX_WINDOW)):
                    if (first, last) not in windows and self._earns(first, last, matched, named):
                        shared = set().union(*(matched.get(i, ()) for i in range(first, last + 1)))
                        coverage = sum(weight[s] for s in shared) / whole
                        windows[first, last] = coverage - _LENGTH_COST * (last - first)
        return windows

    @staticmethod
    def _earns(first: int, last: int, matched: dict[int, set[str]], named: set[str]) -> bool:
        """Whether each end sentence of a window adds a word of the claim, not of a name: a
        neighbour is read for a claim's other half, never only for a fact it happens to hold."""
        for end, others in ((first, range(first + 1, last + 1)), (last, range(first, last))):
            if first == last:
                return True
            rest = set().union(*(matched.get(i, ()) for i in others))
            if not matched.get(end, set()) - named - rest:
                return False
        return True

    def _passage(
        self,
        first: int,
        last: int,
        shared: set[str],
        weight: dict[str, float],
        whole: float,
        facts: Facts,
    ) -> Passage:
        """The window from sentence ``first`` to ``last``, with the claim's facts it lacks."""
        span = trim_span(self.text, self.spans[first][0], self.spans[last][1])
        missing: tuple[str, ...] = ()
        if facts.count:
            dated = bool(facts.dates)
            parts = [self._sentence_facts(i, dated) for i in range(first, last + 1)]
            missing = missing_facts(facts, merge_facts(parts), self.title)
        return Passage(
            span=span,
            coverage=sum(weight[s] for s in shared) / whole,
            missing=missing,
            facts_held=facts.count - len(missing),
        )

    def _sentence_facts(self, index: int, dated: bool) -> Facts:
        """A sentence's facts, read once per answer (with dates only when a claim has one)."""
        facts = self._facts.get((index, dated))
        if facts is None:
            start, end = self.spans[index]
            text = self.text[start:end]
            facts = self._facts[index, dated] = find_facts(text, claim=False, with_dates=dated)
        return facts


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into sentences, long runs without a full stop into pieces at spaces.
    Spans keep their surrounding spaces: a passage is trimmed once it is chosen."""
    ends = sentence_ends(text)
    spans = list(zip([0, *ends[:-1]], ends, strict=True))
    if any(end - start > MAX_SENTENCE_CHARS for start, end in spans):
        spans = [piece for span in spans for piece in _pieces(text, *span)]
    return spans[:MAX_SENTENCES]


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut a run longer than a sentence may be at spaces (or anywhere, when it has none)."""
    pieces = []
    while end - start > MAX_SENTENCE_CHARS:
        cut = text.rfind(" ", start + MAX_SENTENCE_CHARS // 2, start + MAX_SENTENCE_CHARS)
        cut = cut if cut > start else start + MAX_SENTENCE_CHARS
        pieces.append((start, cut))
        start = cut
    pieces.append((start, end))
    return pieces
