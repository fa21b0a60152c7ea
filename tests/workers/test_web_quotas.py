"""A user's daily web quotas in real turns: searches on the admin's engine and megabytes
fetched. Over either, the tool's result is the sentence the model reads; a search with the
user's own engine is not counted; the day's end frees them. Each test holds its day open
(``hold_window``), so that one run at 23:59:59 does not see the day end between its counts."""

from __future__ import annotations

import json

import pytest

from core.extensions import db, get_redis
from core.limits import set_overrides
from core.models import UsageCount
from core.quotas import WINDOW_SECONDS, key, remaining
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.fake_model import FakeModel, Reply
from tests.support.live_server import LiveServer
from tests.support.models import add_fake_provider
from tests.support.quotas import hold_window
from tests.support.sites import Site
from tests.support.workers import CeleryWorker

SEARCH_USED = "Today's web search quota is used up; it resets at 00:00 UTC."
FETCH_USED = "Today's quota of pages to fetch is used up; it resets at 00:00 UTC."
PAGE = (
    b"<html><body><article><p>" + b"Lighthouse facts. " * 40_000 + b"</p></article></body></html>"
)


@pytest.fixture
def site():
    """A SearXNG instance and a page of about 720 kB, on one loopback server."""
    with Site() as server:
        found = {
            "query": "q",
            "results": [{"title": "T", "url": server.url("/page"), "content": "c"}],
        }
        server.serve("/search", "application/json", json.dumps(found).encode())
        server.serve("/page", "text/html; charset=utf-8", PAGE)
        yield server.url("")


@pytest.fixture
def stack(make_app, tmp_path, site):
    """An app with the built-in plugins, its worker, its server, a fake model and a signed-in
    user (not an admin) with a token; the admin's engine is SearXNG on the site."""
    app = make_app(ALLOW_PRIVATE_NETWORKS=True)
    with FakeModel() as fake, LiveServer(app) as web, CeleryWorker(app, tmp_path):
        add_fake_provider(app, fake.base_url)
        _admin, admin_token = token_for(app, admin=True)
        user, user_token = token_for(app)
        user_id = user.id
        ChatClient(web.url, admin_token).search_with_searxng(site)
        chat = ChatClient(web.url, user_token)
        chat.user_id = user_id
        yield app, fake, chat


def tool_results(chat: ChatClient, turn: dict) -> list[dict]:
    """Return the tool results of a turn's reply."""
    return [p for p in chat.reply(turn)["parts"] if p["type"] == "tool-result"]


def test_searches_on_the_admins_engine_stop_at_the_quota_and_own_engine_searches_do_not_count(
    stack, site
):
    app, fake, chat = stack
    with app.app_context():
        set_overrides(chat.user_id, {"searchesPerDay": 1})
        db.session.commit()
        hold_window(get_redis(), key(chat.user_id, "searchesPerDay"), WINDOW_SECONDS["day"])
    search = Reply.tool_calls([("web_search", {"query": "lighthouse"})])
    fake.script(search, search, Reply.text("Once."))

    turn = chat.run(chat.new_conversation(), "Search twice", "fake/m")

    results = tool_results(chat, turn)
    assert [r["outcome"] for r in results] == ["ok", "error"]
    assert results[1]["error"] == SEARCH_USED
    sent = fake.chat_requests()[2].json["messages"]
    assert SEARCH_USED in [m for m in sent if m["role"] == "tool"][-1]["content"]

    own = site.replace("127.0.0.1", "localhost")  # the user's own instance, not the admin's
    saved = chat.call(
        "PUT", "/api/plugins/web_search/settings", json={"engine": "searxng", "baseURL": own}
    )
    assert saved.status_code == 200, saved.text
    fake.script(search, Reply.text("Mine."))
    mine = chat.run(chat.new_conversation(), "Search with mine", "fake/m")
    assert [r["outcome"] for r in tool_results(chat, mine)] == ["ok"]
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(chat.user_id)}
        assert shown["searchesPerDay"]["used"] == 1

    chat.call("PUT", "/api/plugins/web_search/settings", json={"engine": "default"})
    with app.app_context():
        get_redis().pexpire(key(chat.user_id, "searchesPerDay"), 1)  # the day ends
    fake.script(search, Reply.text("Again."))
    again = chat.run(chat.new_conversation(), "Search tomorrow", "fake/m")
    assert [r["outcome"] for r in tool_results(chat, again)] == ["ok"]


def test_fetching_stops_once_the_days_megabytes_are_read(stack, site):
    app, fake, chat = stack
    with app.app_context():
        set_overrides(chat.user_id, {"fetchBytesPerDay": 1})
        db.session.commit()
        hold_window(get_redis(), key(chat.user_id, "fetchBytesPerDay"), WINDOW_SECONDS["day"])
    fetch = Reply.tool_calls([("web_fetch", {"url": f"{site}/page"})])
    other = Reply.tool_calls([("web_fetch", {"url": f"{site}/page?again"})])
    third = Reply.tool_calls([("web_fetch", {"url": f"{site}/page?third"})])
    fake.script(fetch, other, third, Reply.text("Read."))

    turn = chat.run(chat.new_conversation(), "Read it", "fake/m")

    results = tool_results(chat, turn)
    # 720 kB read: under the megabyte, so the second fetch runs and passes it; the third is
    # refused.
    assert [r["outcome"] for r in results] == ["ok", "ok", "error"]
    assert results[2]["error"] == FETCH_USED
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(chat.user_id)}
        read = db.session.scalars(
            db.select(UsageCount.amount).filter_by(user_id=chat.user_id, metric="fetchedBytes")
        ).all()
        # The quota and the usage report count the same bytes, once each.
        assert shown["fetchBytesPerDay"]["used"] == sum(read) >= 2 * 700_000
        assert shown["fetchBytesPerDay"]["allowed"] == 1_000_000
        get_redis().pexpire(key(chat.user_id, "fetchBytesPerDay"), 1)
    fake.script(third, Reply.text("Read again."))
    again = chat.run(chat.new_conversation(), "Read it tomorrow", "fake/m")
    assert [r["outcome"] for r in tool_results(chat, again)] == ["ok"]
