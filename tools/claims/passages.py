"""Finds the passage of a source that best supports a claim: a window of one to three sentences.

A source is indexed once per answer (``SourceIndex``): its sentences, each as a set of
lower-case words, and its words grouped by stem. A claim's content stems are weighted by how
rare they are among the source's sentences (inverse document frequency), the sentences that
share the most weight are the candidates, and the windows around them are ranked by the weight
they share plus the share of the claim's facts they hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tools.claims.facts import Facts, find_facts, missing_facts
from tools.claims.markers import sentence_ends
from tools.claims.words import WORD, stem

MAX_SOURCE_CHARS = 200_000
MAX_SENTENCES = 5_000
MAX_SENTENCE_CHARS = 600
CANDIDATES = 4
MAX_WINDOW = 3
# A window of several sentences must earn its length: each extra sentence costs this much rank.
_LENGTH_COST = 0.03
_FACT_WEIGHT = 0.5


@dataclass(frozen=True)
class Passage:
    """The best window for a claim and how well it supports it."""

    span: tuple[int, int]
    coverage: float  # share of the claim's content stems (weighted by rarity) the window holds
    plain_coverage: float  # the same share, every stem counted once
    missing: tuple[str, ...]


class SourceIndex:
    """One source's text, cut into sentences and indexed by word, once per answer."""

    def __init__(self, text: str) -> None:
        self.text = text[:MAX_SOURCE_CHARS]
        self.spans = _sentence_spans(self.text)
        self.words = [frozenset(WORD.findall(self.text[a:b].lower())) for a, b in self.spans]
        self.by_stem: dict[str, set[str]] = {}
        for word in frozenset().union(*self.words):
            self.by_stem.setdefault(stem(word), set()).add(word)
        self._facts: dict[tuple[int, int], Facts] = {}

    def find_passage(self, stems: set[str], facts: Facts) -> Passage | None:
        """Return the window that best supports a claim of ``stems`` and ``facts``, or None
        when no sentence shares a content word with it."""
        surfaces = {word: s for s in stems for word in self.by_stem.get(s, ())}
        if not surfaces:
            return None
        wanted = frozenset(surfaces)
        matched: dict[int, set[str]] = {}
        for index, words in enumerate(self.words):
            shared = words & wanted
            if shared:
                matched[index] = {surfaces[word] for word in shared}
        counts: dict[str, int] = {}
        for found in matched.values():
            for s in found:
                counts[s] = counts.get(s, 0) + 1
        total = len(self.words) + 1
        weight = {s: math.log(1 + total / (counts.get(s, 0) + 0.5)) for s in stems}
        whole = sum(weight.values()) or 1.0
        best_sentences = sorted(matched, key=lambda i: -sum(weight[s] for s in matched[i]))
        best: tuple[float, Passage] | None = None
        seen: set[tuple[int, int]] = set()
        for centre in best_sentences[:CANDIDATES]:
            for first in range(max(0, centre - MAX_WINDOW + 1), centre + 1):
                for last in range(centre, min(len(self.spans), first + MAX_WINDOW)):
                    if (first, last) in seen:
                        continue
                    seen.add((first, last))
                    shared = set().union(*(matched.get(i, ()) for i in range(first, last + 1)))
                    candidate = self._passage(first, last, shared, weight, whole, stems, facts)
                    fact_count = len(facts.numbers) + len(facts.dates) + len(facts.names)
                    held = 1.0 - len(candidate.missing) / fact_count if fact_count else 1.0
                    rank = candidate.coverage + _FACT_WEIGHT * held - _LENGTH_COST * (last - first)
                    if best is None or rank > best[0]:
                        best = (rank, candidate)
        return best[1] if best else None

    def _passage(
        self,
        first: int,
        last: int,
        shared: set[str],
        weight: dict[str, float],
        whole: float,
        stems: set[str],
        facts: Facts,
    ) -> Passage:
        span = (self.spans[first][0], self.spans[last][1])
        held = self._facts.get(span)
        if held is None:
            held = self._facts[span] = find_facts(self.text[span[0] : span[1]], claim=False)
        return Passage(
            span=span,
            coverage=sum(weight[s] for s in shared) / whole,
            plain_coverage=len(shared) / len(stems),
            missing=missing_facts(facts, held),
        )


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Cut ``text`` into sentences, long runs without a full stop into pieces at spaces."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end in sentence_ends(text):
        while end - start > MAX_SENTENCE_CHARS:
            cut = text.rfind(" ", start + MAX_SENTENCE_CHARS // 2, start + MAX_SENTENCE_CHARS)
            cut = cut if cut > start else start + MAX_SENTENCE_CHARS
            spans.append((start, cut))
            start = cut
        if text[start:end].strip():
            spans.append(_strip(text, start, end))
        start = end
        if len(spans) >= MAX_SENTENCES:
            break
    return spans[:MAX_SENTENCES]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
