"""The sources of one reply: each URL cited once, whoever cites it.

Two paths cite, and both go through ``Sources`` and the turn's Redis set of cited URLs:
- the model's own citations while it streams: ``claim`` publishes each new one at once. The
  step starts from what the reply cites as it read it (``core.turn.replies.cited_in``), and
  seeds the set with the same URLs as it starts (``workers.steps.read_flags``);
- a tool's ``ctx.cite``: the call collects into a ``CitationList`` of its own
  (``workers.context``) and, only with an ``ok`` result, ``claim_all`` publishes what no
  parallel call cited first. The call knows nothing of what the reply cites: the seeded set
  answers, and the database (``core.turn.replies.cited_urls``) only when Redis lost the set
  (``TurnState.cite``'s ``known``). The call keeps all it cited, cited before or not: its
  citations are checked against what it read.
What is stored of both (the step's sources, the call's citations) reaches the reply through
its derivation (``core.turn.replies``), which shows each URL once.
A URL is claimed in the turn's Redis set (``TurnState.cite``, which publishes its event in the
same round trip), so parallel tool calls in other processes cite it once; the set refuses
claims once the turn has ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.turn import events
from core.turn.parts import Part, source_part
from core.turn.state import TurnState
from tools.api import Citation
from tools.citations import cut_title, is_presentable_url


class Sources:
    """The URLs a reply cites, and the one way to cite another."""

    def __init__(
        self,
        state: TurnState,
        cited: Iterable[str] = (),
        known: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        """``cited``: the URLs the turn cites so far; or, for a caller that does not know them,
        ``known``, which returns them, asked only when Redis lost the seeded set."""
        self.state = state
        self.cited: set[str] = set(cited)
        self.known = known

    def claim(self, url: str, title: str | None = None) -> Part | None:
        """Cite a source now: publish it and return its part; None for a URL that is not
        http(s), already cited (here or by a parallel call), or cited after the turn ended."""
        if url in self.cited or not is_presentable_url(url):
            return None
        parts = self._publish([(url, title)])
        return parts[0] if parts else None

    def claim_all(self, citations: Iterable[Citation]) -> list[dict[str, Any]]:
        """Cite each of a call's collected citations not cited yet, in one round trip; return
        all of them (``{url, title}``, with ``snippet`` when given), to be stored with the
        call; none once the turn has ended."""
        kept = []
        for citation in citations:
            stored = {"url": citation.url, "title": citation.title}
            if citation.snippet:
                stored["snippet"] = citation.snippet
            kept.append(stored)
        new = [(c["url"], c["title"]) for c in kept if is_presentable_url(c["url"])]
        # Even with none new, the round trip says whether the turn has ended.
        return [] if self._publish(new) is None else kept

    def _publish(self, cited: list[tuple[str, str | None]]) -> list[Part] | None:
        """Claim and publish each URL not cited yet, titles cut; return the parts of those
        claimed, or None once the turn has ended."""
        sources: dict[str, dict[str, Any]] = {}
        for url, title in cited:
            if url not in self.cited and url not in sources:
                sources[url] = events.source_data(url, cut_title(title))
        claimed = self.state.cite(events.SOURCE_ADDED, list(sources.items()), self.known)
        if claimed is None:
            return None
        parts = []
        for (url, data), new in zip(sources.items(), claimed, strict=True):
            if new:
                self.cited.add(url)
                parts.append(source_part(url, data["title"]))
        return parts
