"""A reply's sources: each URL cited once, whichever path cites it (issue 13)."""

from __future__ import annotations

import uuid

import pytest
import redis

from core.turn.events import SOURCE_ADDED
from core.turn.parts import source_part, source_urls, text_part
from core.turn.sources import Sources
from core.turn.state import TurnState
from tools.api import Citation
from tools.citations import CitationList


@pytest.fixture
def state(redis_url) -> TurnState:
    return TurnState(redis.Redis.from_url(redis_url), f"t-{uuid.uuid4().hex}")


def published(state: TurnState) -> list[str]:
    return [data["url"] for _, name, data in state.read() if name == SOURCE_ADDED]


def test_a_reply_cites_each_url_once_whichever_path_brings_it(state):
    reply = [text_part("Earlier"), source_part("https://a.example/", "A")]
    sources = Sources(state, source_urls(reply))

    # The model's own citation: published at once, except what the reply already cites.
    assert sources.claim("https://a.example/", "A again") is None
    assert sources.claim("https://b.example/", "B") == source_part("https://b.example/", "B")
    assert sources.claim("javascript:alert(1)", "no link") is None

    # A parallel tool call in another process, with its own view of the reply, claims through
    # the same Redis set: what the model cited meanwhile is not cited twice. The call keeps
    # all it cited, with the snippets, for its citations to be checked against.
    call = Sources(state, source_urls(reply))
    collected = CitationList()  # as ``workers.context`` collects a call's ``ctx.cite``
    collected.cite("https://b.example/", "B from a page")
    collected.cite("https://c.example/", "C", "  C's   snippet ")
    assert call.claim_all(collected.citations) == [
        {"url": "https://b.example/", "title": "B from a page"},
        {"url": "https://c.example/", "title": "C", "snippet": "C's snippet"},
    ]

    assert published(state) == ["https://b.example/", "https://c.example/"]


def test_nothing_is_cited_once_the_turn_has_ended(state):
    sources = Sources(state)
    state.end(stream_ttl_seconds=600)
    assert sources.claim("https://late.example/", "Late") is None
    assert sources.claim_all([Citation(url="https://late.example/", title=None)]) == []
    assert published(state) == []


def test_a_calls_citations_are_claimed_and_published_in_one_round_trip(state):
    """Issue 29: the turn's end check, each citation's claim and each ``source.added`` were a
    round trip each (five for a call citing two new URLs)."""
    # Another turn's claim gives the server the script (a new server needs it loaded first).
    Sources(TurnState(state.client, f"other-{state.turn_id}")).claim_all([])
    sent: list[str] = []
    execute = state.client.execute_command

    def counted(*args, **kwargs):
        sent.append(args[0])
        return execute(*args, **kwargs)

    state.client.execute_command = counted
    call = Sources(state, ["https://a.example/"])
    cited = [Citation(f"https://{name}.example/", name.upper()) for name in ("a", "b", "c")]
    assert [c["url"] for c in call.claim_all(cited)] == [c.url for c in cited]
    assert sent == ["EVALSHA"]
    assert published(state) == ["https://b.example/", "https://c.example/"]
    assert state.client.ttl(f"lookout:turn:{state.turn_id}:cited") > 0
