"""The sources of one reply: each URL cited once, whoever cites it.

Two paths cite, and both go through ``Sources``, which starts from what the turn cites
(``core.turn.replies.cited_urls``):
- the model's own citations while it streams: ``claim`` publishes each new one at once;
- a tool's ``ctx.cite``: the call collects into ``collector()`` and, only with an ``ok``
  result, ``claim_all`` publishes what no parallel call cited first. The call keeps all it
  cited, cited before or not: its citations are checked against what it read.
What is stored of both (the step's sources, the call's citations) reaches the reply through
its derivation (``core.turn.replies``), which shows each URL once.
A URL is claimed in the turn's Redis set (``TurnState.claim_citation``), so parallel tool calls
in other processes cite it once; the set refuses claims once the turn has ended.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.turn import events
from core.turn.parts import Part, source_part
from core.turn.state import TurnState
from tools.api import Citation
from tools.citations import CitationList


class Sources:
    """The URLs a reply cites, and the one way to cite another."""

    def __init__(self, state: TurnState, cited: Iterable[str] = ()) -> None:
        """``cited``: the URLs the turn cites so far."""
        self.state = state
        self.cited: set[str] = set(cited)
        # Checks the URL and cuts the title; what is cited is ``cited`` alone, read first.
        self._claims = CitationList(claim=state.claim_citation)

    def claim(self, url: str, title: str | None = None) -> Part | None:
        """Cite a source now: publish it and return its part; None for a URL that is not
        http(s), already cited (here or by a parallel call), or cited after the turn ended."""
        if url in self.cited:
            return None
        citation = self._claims.add(url, title)
        if citation is None:
            return None
        self.cited.add(citation.url)
        events.source_added(self.state, citation.url, citation.title)
        return source_part(citation.url, citation.title)

    def collector(self) -> CitationList:
        """Return a list a tool call collects its citations into (``ToolContext.cite``), each
        URL once, cited before or not: it publishes nothing; ``claim_all`` does, for an ``ok``
        result."""
        return CitationList()

    def claim_all(self, citations: Iterable[Citation]) -> list[dict[str, Any]]:
        """Cite each of a call's collected citations not cited yet; return all of them
        (``{url, title}``, with ``snippet`` when given), to be stored with the call; none
        once the turn has ended."""
        if self.state.exists("ended"):
            return []
        kept = []
        for citation in citations:
            self.claim(citation.url, citation.title)
            stored = {"url": citation.url, "title": citation.title}
            if citation.snippet:
                stored["snippet"] = citation.snippet
            kept.append(stored)
        return kept
