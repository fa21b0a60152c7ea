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
    collected = call.collector()
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
