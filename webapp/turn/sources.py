"""The sources of one reply: each URL cited once, whoever cites it.

Three paths cite, and all of them go through ``Sources``:
- the model's own citations while it streams: ``claim`` publishes each new one at once;
- a tool's ``ctx.cite``: the call collects into ``collector()`` and, only with an ``ok``
  result, ``claim_all`` publishes what no parallel call cited first;
- the stored results a step (or an ending) replays into the reply: ``replay`` adds their
  sources, already published when their call ended, without publishing again.
A URL is claimed in the turn's Redis set (``TurnState.claim_citation``), so parallel tool calls
in other processes cite it once; the set refuses claims once the turn has ended.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tools.api import Citation
from tools.citations import CitationList
from webapp.turn import events
from webapp.turn.parts import Part, source_part, source_urls
from webapp.turn.state import TurnState


class Sources:
    """The URLs a reply cites, and the one way to cite another."""

    def __init__(self, state: TurnState, parts: Iterable[Mapping[str, Any]] = ()) -> None:
        """``parts``: what the reply holds so far; its sources count as cited."""
        self.state = state
        self.cited: set[str] = source_urls(parts)
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
        """Return a list a tool call collects its citations into (``ToolContext.cite``): it
        publishes nothing; ``claim_all`` does, for an ``ok`` result."""
        return CitationList(seen=self.cited)

    def claim_all(self, citations: Iterable[Citation]) -> list[dict[str, Any]]:
        """Cite each of a call's collected citations not cited yet; return them as published
        (``{url, title}``), to be stored with the call."""
        claimed = (self.claim(c.url, c.title) for c in citations)
        return [{"url": p["url"], "title": p["title"]} for p in claimed if p is not None]

    def replay(self, parts: list[Part], stored: Iterable[Mapping[str, Any]]) -> list[Part]:
        """Append to ``parts`` a source part for each stored ``{url, title}`` the reply does
        not cite yet (sources published before: nothing is published again); return ``parts``."""
        for source in stored:
            if source["url"] not in self.cited:
                self.cited.add(source["url"])
                parts.append(source_part(source["url"], source.get("title")))
        return parts
