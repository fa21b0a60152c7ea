"""Checks each ``[n]`` citation of an answer against the text actually read for source n.

The check is local, deterministic and cheap: no model is asked. For each marker (grammar in
``tools.claims.markers``: ``[3]``, ``[1][2]``, ``[1, 2]``, ``[1-3]``; never inside code) it takes
the claim the marker closes (the sentence that holds it, or the one before it when the marker
follows the full stop; when a sentence has markers in several places, the words from the
previous marker up to this one, if they make a claim of their own), finds the passage of the
source that shares the most of the claim's content words (``tools.claims.passages``), and
compares the facts a reader would check (``tools.claims.facts``: numbers, dates, names, a
negation). Statuses:

- ``supported``: the passage holds every one of the claim's facts and half of its content words
  (by rarity), or 30 % of them when the claim has two facts or more.
- ``partly``: the passage shares the claim's subject but lacks some of its facts or words.
- ``not_found``: no passage of what was read shares the claim's subject.
- ``snippet_only``: the source is a search result never fetched and its snippet supports the
  claim as ``supported`` would; when the snippet does not, the status is ``not_found`` (a
  snippet is too short to say that a page only partly supports a claim), with its passage and
  missing facts still given.
- ``no_such_source``: the answer cites a number no source has.

Work is bounded whatever the input: the first ``MAX_ANSWER_CHARS`` of the answer, its first
``MAX_CHECKS`` citations, the last ``MAX_CLAIM_CHARS`` of each claim, the first 200,000
characters of each source, each source indexed once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tools.claims.facts import NO_FACTS, Facts, find_facts, missing_facts
from tools.claims.markers import MARKER, Marker, find_markers, sentence_around, sentence_ends
from tools.claims.passages import Passage, SourceIndex
from tools.claims.words import content_stems

MAX_ANSWER_CHARS = 100_000
MAX_CHECKS = 200
# A claim is read up to its last 3,000 characters, and looked up by its 64 longest stems (the
# rarest, mostly): a run-on "sentence" of a whole answer costs no more than a long one.
MAX_CLAIM_CHARS = 3_000
MAX_CLAIM_STEMS = 64
# Shares of a claim's content stems (weighted by rarity in the source) a passage must hold.
SUPPORTED_COVERAGE = 0.5
PARTLY_COVERAGE = 0.25
# A claim whose two or more facts all stand in the passage needs fewer of its words there: a
# paraphrase changes the verbs ("grew" for "rose"), seldom the figures.
FACTS_FOR_LOWER_COVERAGE = 2
FACTS_COVERAGE = 0.3
# A clause between two markers is checked alone when it has this many content words.
MIN_CLAUSE_STEMS = 3

Status = Literal["supported", "partly", "not_found", "snippet_only", "no_such_source"]
_URL = re.compile(r"https?://\S{1,2000}")


@dataclass(frozen=True)
class SourceText:
    """What was read for source ``number``: a fetched page's stored text, or a search snippet.
    The text may be a tool's output serialised as JSON (``tools.untrusted.serialise``): its
    escaped line breaks and quotes are read as such, and offsets are into the text as given."""

    number: int
    text: str
    snippet_only: bool


@dataclass(frozen=True)
class CitationCheck:
    """The verdict on one cited source of one claim, with offsets into the answer and source."""

    number: int
    marker: tuple[int, int]
    sentence: tuple[int, int]
    status: Status
    passage: tuple[int, int] | None
    missing: tuple[str, ...]


@dataclass(frozen=True)
class _Claim:
    span: tuple[int, int]
    stems: set[str]
    facts: Facts


def check_answer(answer: str, sources: Mapping[int, SourceText]) -> list[CitationCheck]:
    """Return one check per cited source number per marker, in the answer's order."""
    answer = answer[:MAX_ANSWER_CHARS]
    markers = find_markers(answer, MAX_CHECKS)
    ends = sentence_ends(answer)
    indexes: dict[int, SourceIndex] = {}
    claims: dict[tuple[int, int], _Claim] = {}
    checks: list[CitationCheck] = []
    for position, marker in enumerate(markers):
        span = _claim_span(answer, ends, markers, position)
        claim = claims.get(span)
        if claim is None:
            claim = claims[span] = _read_claim(answer, span)
        for number in marker.numbers:
            if len(checks) == MAX_CHECKS:
                return checks
            checks.append(_check(number, marker, claim, sources, indexes))
    return checks


def _claim_span(
    answer: str, ends: list[int], markers: list[Marker], position: int
) -> tuple[int, int]:
    """The sentence of the marker, or its clause when markers stand in several places."""
    marker = markers[position]
    sentence = sentence_around(answer, ends, marker.start)
    start, end = sentence
    before = [
        m for m in markers[max(0, position - 20) : position] if start <= m.start < marker.start
    ]
    after = [m for m in markers[position + 1 : position + 21] if marker.end <= m.start < end]
    # Markers in a row cite one claim; the claim is cut only at text between markers.
    if before and answer[before[-1].end : marker.start].strip():
        start = before[-1].end
    if after and answer[marker.end : after[0].start].strip() and marker.end < end:
        end = marker.end
    if (start, end) == sentence:
        return sentence
    clause_words = content_stems(_plain(answer[start:end]))
    return (start, end) if len(clause_words) >= MIN_CLAUSE_STEMS else sentence


def _plain(text: str) -> str:
    """The claim's words: markers and links blanked."""
    return _URL.sub(" ", MARKER.sub(" ", text))


def _read_claim(answer: str, span: tuple[int, int]) -> _Claim:
    """The claim's words and facts, read once however many markers cite it."""
    text = _plain(answer[max(span[0], span[1] - MAX_CLAIM_CHARS) : span[1]])
    stems = sorted(content_stems(text), key=lambda s: (-len(s), s))[:MAX_CLAIM_STEMS]
    return _Claim(span=span, stems=set(stems), facts=find_facts(text, claim=True))


def _check(
    number: int,
    marker: Marker,
    claim: _Claim,
    sources: Mapping[int, SourceText],
    indexes: dict[int, SourceIndex],
) -> CitationCheck:
    source = sources.get(number)
    if source is None:
        return CitationCheck(
            number, (marker.start, marker.end), claim.span, "no_such_source", None, ()
        )
    index = indexes.get(number)
    if index is None:
        index = indexes[number] = SourceIndex(source.text)
    passage = index.find_passage(claim.stems, claim.facts) if claim.stems else None
    status = _status(passage, source.snippet_only)
    # A passage sharing too little to be the claim's subject is not shown as its support.
    shown = passage is not None and (status != "not_found" or source.snippet_only)
    return CitationCheck(
        number=number,
        marker=(marker.start, marker.end),
        sentence=claim.span,
        status=status,
        passage=passage.span if shown and passage else None,
        # Without a passage shown, every fact of the claim is one the reader cannot find.
        missing=passage.missing if shown and passage else missing_facts(claim.facts, NO_FACTS),
    )


def _status(passage: Passage | None, snippet_only: bool) -> Status:
    if passage is None or passage.coverage < PARTLY_COVERAGE:
        return "not_found"
    supported = passage.coverage >= SUPPORTED_COVERAGE or (
        passage.facts_held >= FACTS_FOR_LOWER_COVERAGE and passage.coverage >= FACTS_COVERAGE
    )
    if supported and not passage.missing:
        return "snippet_only" if snippet_only else "supported"
    return "not_found" if snippet_only else "partly"
