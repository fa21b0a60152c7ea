"""Checks each ``[n]`` marker of an ended reply's text against what the turn read of source n.

What the turn read of a source is the stored output of the calls that cited it without a
snippet (a page fetched: its text), joined in call order; a source no call read is checked
against its search snippet, and says so (``snippet_only``). The check itself is
``tools.citation_checks.check_answer``: local and deterministic, so a reply derived again
carries the same citations. A citation is stored with its text part (``citations``):

    {"number", "url", "title", "readAt", "status", "marker": [start, end],
     "sentence": [start, end], "passage": {"start", "end", "text"} | None, "missing": [...]}

``marker`` and ``sentence`` are offsets into the part's text; ``passage`` offsets into the
source's read text.

The check costs milliseconds of CPU, and a turn's ending derives its reply twice: once before
it writes (the check runs there, outside the write's lock) and once in the write, when what it
read changed meanwhile. So each text part's checks are kept, per process, with the texts they
were checked against (``CHECKS_KEPT`` parts): the same text against equal source texts is not
checked again, and a text or a source that changed (a call that finished in between, a result
that arrived after a Stop) is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.models import ToolCall
from core.turn.parts import SOURCE, TEXT, Part, kind_of, text_part
from tools.citation_checks import (
    MAX_ANSWER_CHARS,
    MAX_CHECKS,
    CitationCheck,
    SourceText,
    check_answer,
)
from tools.claims.markers import find_markers
from tools.untrusted import serialise

# What is checked of one source: far more than a page part, never a whole large download.
MAX_READ_CHARS = 200_000
# A passage is quoted in a card: a sentence or two, never a page.
MAX_PASSAGE_CHARS = 1_000
# Text parts whose checks a process keeps: enough for the endings a worker's threads run at
# once, each holding its sources' texts (at most MAX_READ_CHARS each) while kept.
CHECKS_KEPT = 32


@dataclass
class _Read:
    """What the turn read of one source: its texts, else its snippet, and when."""

    texts: list[str] = field(default_factory=list)
    snippet: str | None = None
    read_at: datetime | None = None

    def source_text(self, number: int) -> SourceText:
        if self.texts:
            return SourceText(number, "\n\n".join(self.texts)[:MAX_READ_CHARS], False)
        if self.snippet:
            return SourceText(number, self.snippet, True)
        return SourceText(number, "", False)  # cited by the model itself: nothing was read


def output_text(output: Any) -> str:
    """Return what a call read, as its citations are checked against: a string output, the
    ``content`` of an object (a page's text), else the output as JSON."""
    if isinstance(output, dict) and isinstance(output.get("content"), str):
        return output["content"]
    return serialise(output)


def read_sources(calls: Iterable[ToolCall], numbers: Mapping[str, int]) -> dict[int, _Read]:
    """Return what the calls (in order) read of each numbered source, by number."""
    reads: dict[int, _Read] = {n: _Read() for n in numbers.values()}
    for call in calls:
        if call.outcome != "ok":
            continue
        text = None
        for citation in call.citations or []:
            read = reads.get(numbers.get(citation.get("url"), 0))
            if read is None:
                continue
            if citation.get("snippet"):
                read.snippet = read.snippet or citation["snippet"]
            else:
                text = output_text(call.output) if text is None else text
                if text in read.texts:
                    continue
                read.texts.append(text)
            read.read_at = read.read_at or call.finished_at
    return reads


def checked_parts(
    parts: list[Part], calls: Iterable[ToolCall], numbers: Mapping[str, int]
) -> list[Part]:
    """Return ``parts`` with each text part's ``citations`` checked (see the module's
    docstring)."""
    reads = read_sources(calls, numbers)
    texts = {n: read.source_text(n) for n, read in reads.items()}
    sources = {p["number"]: p for p in parts if kind_of(p) == SOURCE and "number" in p}
    checked = []
    for part in parts:
        if kind_of(part) == TEXT:
            checks = _CHECKS.get(part["text"], texts)
            if checks:  # a text without markers reads as it always did
                cited = [_citation(c, sources, texts, reads) for c in checks]
                part = text_part(part["text"], cited)
        checked.append(part)
    return checked


class _CheckMemo:
    """The checks of the last ``CHECKS_KEPT`` texts, each with the source texts it was checked
    against (compared for equality when asked again); safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: OrderedDict[str, tuple[tuple, list[CitationCheck]]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, text: str, texts: Mapping[int, SourceText]) -> list[CitationCheck]:
        """Return ``check_answer(text, texts)``, checked again only when the text or a source
        it cites differs from the last time."""
        cited = {n for m in find_markers(text[:MAX_ANSWER_CHARS], MAX_CHECKS) for n in m.numbers}
        if not cited:
            return []
        against = tuple((n, texts.get(n)) for n in sorted(cited))
        with self.lock:
            kept = self.kept.get(text)
            if kept is not None and kept[0] == against:
                self.kept.move_to_end(text)
                return kept[1]
        checks = check_answer(text, texts)
        with self.lock:
            self.kept[text] = (against, checks)
            self.kept.move_to_end(text)
            while len(self.kept) > self.size:
                self.kept.popitem(last=False)
        return checks


_CHECKS = _CheckMemo(CHECKS_KEPT)


def _citation(
    check: CitationCheck,
    sources: Mapping[int, Part],
    texts: Mapping[int, SourceText],
    reads: Mapping[int, _Read],
) -> dict[str, Any]:
    source = sources.get(check.number, {})
    read = reads.get(check.number)
    passage = None
    if check.passage is not None and check.number in texts:
        start, end = check.passage
        text = texts[check.number].text[start:end][:MAX_PASSAGE_CHARS]
        passage = {"start": start, "end": end, "text": text}
    return {
        "number": check.number,
        "url": source.get("url"),
        "title": source.get("title"),
        "readAt": read.read_at.isoformat() if read and read.read_at else None,
        "status": check.status,
        "marker": list(check.marker),
        "sentence": list(check.sentence),
        "passage": passage,
        "missing": list(check.missing),
    }
