"""Usage counted where it happens: a real turn through a real worker searches on a loopback
engine, fetches pages (one missing, one from the turn cache) and answers; its owner's usage
rows then hold exactly what the turn did."""

from __future__ import annotations

import json

import pytest

from core.extensions import db
from core.models import UsageCount
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.fake_model import FakeModel, Reply
from tests.support.live_server import LiveServer
from tests.support.models import add_fake_provider
from tests.support.sites import Site
from tests.support.workers import CeleryWorker

ARTICLE = b"<html><head><title>Tides</title></head><body><p>High tide is at noon.</p></body></html>"


@pytest.fixture
def site():
    """A SearXNG instance and one page on a loopback server; yields its address."""
    with Site() as server:
        results = {"results": [{"title": "Tides", "url": server.url("/tides"), "content": "x"}]}
        server.serve("/search", "application/json", json.dumps(results).encode())
        server.serve("/tides", "text/html; charset=utf-8", ARTICLE)
        yield server.url("")


def usage_of(app, user_id: str) -> dict[tuple[str, str], int]:
    """Return the user's usage as {(metric, detail): amount}, whatever the day: the worker
    counts on its own clock, and a turn run at 23:59:59 counts on two days."""
    usage: dict[tuple[str, str], int] = {}
    with app.app_context():
        for row in db.session.scalars(db.select(UsageCount).filter_by(user_id=user_id)):
            usage[row.metric, row.detail] = usage.get((row.metric, row.detail), 0) + row.amount
    return usage


def test_a_turn_counts_its_outcome_tokens_search_pages_bytes_and_tool_errors(
    make_app, tmp_path, site
):
    app = make_app(ALLOW_PRIVATE_NETWORKS=True)
    with FakeModel() as fake, LiveServer(app) as web, CeleryWorker(app, tmp_path):
        add_fake_provider(app, fake.base_url)
        admin, token = token_for(app, admin=True)
        admin_id = admin.id
        chat = ChatClient(web.url, token)
        chat.search_with_searxng(site)
        fake.script(
            Reply.tool_calls([("web_search", {"query": "tides"})], usage=(100, 7)),
            Reply.tool_calls(
                [("web_fetch", {"url": f"{site}/tides"}), ("web_fetch", {"url": f"{site}/gone"})],
                usage=(200, 9),
            ),
            Reply.tool_calls([("web_fetch", {"url": f"{site}/tides"})], usage=(300, 11)),
            Reply.text("High tide is at noon.", usage=(400, 13)),
        )
        assert usage_of(app, admin_id) == {}
        turn = chat.run(chat.new_conversation(), "When is high tide?", "fake/m")
        assert turn["status"] == "completed", turn

    assert usage_of(app, admin_id) == {
        ("turns", "completed"): 1,
        ("inputTokens", "fake/m"): 1000,
        ("outputTokens", "fake/m"): 40,
        ("searches", "searxng"): 1,
        ("pagesFetched", ""): 1,  # the second read of /tides came from the turn cache
        ("fetchedBytes", ""): len(ARTICLE),
        ("toolErrors", "web_fetch"): 1,  # /gone answered 404
    }


def test_a_failed_turn_and_a_cancelled_turn_are_each_counted_once_by_their_outcome(
    chat, chat_app, fake_model, model_ids
):
    fake_model.script(Reply.error(400))
    failed = chat.run(chat.new_conversation(), "fail", model_ids[1])
    assert failed["status"] == "failed", failed
    fake_model.script(Reply.forever("tick "))
    started = chat.start(chat.new_conversation(), "talk", model_ids[1])
    turn_id = started["turn"]["id"]
    assert chat.call("POST", f"/api/turns/{turn_id}/cancel").status_code == 200
    assert chat.wait(turn_id)["status"] == "cancelled"
    # A second ending (the step that notices the cancel) counts nothing more.
    assert chat.call("POST", f"/api/turns/{turn_id}/cancel").status_code in (200, 409)
    assert usage_of(chat_app, chat.user_id) == {("turns", "failed"): 1, ("turns", "cancelled"): 1}
