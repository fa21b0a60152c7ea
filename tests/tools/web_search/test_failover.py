"""The admin's fallback engine: it answers when the first is rate-limited, blocked or down,
follows the same role rule as the admin's engine, and the output and log say who answered;
every engine that fails a search is reported through the plugin API, with why."""

from __future__ import annotations

import logging
import uuid

import pytest
import redis

from tests.support.processes import free_port
from tests.support.quotas import DayQuotas
from tools.api import PluginConfigError, Signal, ToolError, on_search_failure
from tools.quotas import SEARCHES
from tools.rates import RedisRates
from tools.settings import merge_save
from tools.testing import start_plugin
from tools.web_search import plugin
from tools.web_search.engines import brave, duckduckgo

BRAVE_KEY = "admin-brave-key-0001"
FALLBACK_KEY = "fallback-brave-key-0003"
USER_KEY = "user-own-key-0002"
ONE_RESULT = {"type": "search", "web": {"results": [{"title": "T", "url": "https://a.example/"}]}}


@pytest.fixture
def searxng(loopback, replying, recording, engine_replies):
    """A SearXNG instance on loopback answering three results (let through the recorded mock)."""
    server = loopback(replying(recording("searxng_results.json")))
    engine_replies.add_passthru(server.url)
    return server


def test_the_fallback_answers_when_the_first_engine_returns_429(
    web_search, search, engine_replies, recording, searxng, caplog
):
    caplog.set_level(logging.INFO, logger="lookout.plugins.web_search")
    engine_replies.get(brave.URL, status=429, body=recording("brave_429.json"))
    tool = web_search(
        engine="brave", apiKey=BRAVE_KEY, fallbackEngine="searxng", fallbackBaseURL=searxng.url
    )
    output, citations = search(tool)
    assert len(output["results"]) == 3 and len(citations) == 3
    assert output["engine"] == "searxng" and output["engineName"] == "SearXNG"
    assert output["fallbackFrom"] == "Brave"
    assert output["fallbackReason"] == (
        'Brave\'s rate limit was reached. Brave said: "Request rate limit exceeded for plan."'
    )
    [line] = [r.getMessage() for r in caplog.records if "answered" in r.getMessage()]
    assert "engine=searxng key=admin fallback_from=brave reason=rate-limited" in line
    assert BRAVE_KEY not in caplog.text


def test_the_fallback_answers_when_duckduckgo_shows_its_block_page(
    web_search, search, engine_replies, recording, searxng
):
    engine_replies.post(duckduckgo.URL, body=recording("duckduckgo_anomaly.html"))
    tool = web_search(
        engine="duckduckgo", fallbackEngine="searxng", fallbackBaseURL=searxng.url, maxResults=2
    )
    output, _ = search(tool)
    assert [r["url"] for r in output["results"]] == [
        r["url"] for r in search(web_search(engine="searxng", baseURL=searxng.url))[0]["results"]
    ][:2]
    assert output["fallbackFrom"] == "DuckDuckGo"
    assert output["fallbackReason"].startswith("DuckDuckGo blocked the search.")


def test_the_fallback_answers_when_the_first_engine_is_down(web_search, search, engine_replies):
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    engine_replies.add_passthru(down)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    tool = web_search(
        engine="searxng", baseURL=down, fallbackEngine="brave", fallbackApiKey=FALLBACK_KEY
    )
    output, _ = search(tool)
    assert output["engine"] == "brave" and output["fallbackFrom"] == "SearXNG"
    assert output["fallbackReason"] == (
        "SearXNG could not be reached. Check its address, or try again later."
    )
    assert engine_replies.calls[-1].request.headers["X-Subscription-Token"] == FALLBACK_KEY


def test_the_fallback_answers_when_the_first_engines_bucket_has_no_slot_in_time(
    web_search, search, engine_replies, searxng, redis_url
):
    rates = RedisRates(redis.Redis.from_url(redis_url))
    key = f"brave-{uuid.uuid4().hex}"  # a bucket of this test's own
    engine_replies.get(brave.URL, json=ONE_RESULT)
    tool = web_search(
        engine="brave",
        apiKey=key,
        rate=0.1,
        fallbackEngine="searxng",
        fallbackBaseURL=searxng.url,
    )
    assert search(tool, rates=rates, signal=Signal.after(20))[0]["engine"] == "brave"
    output, _ = search(tool, rates=rates, signal=Signal.after(20))
    assert output["engine"] == "searxng" and len(searxng.seen) == 1
    assert output["fallbackReason"] == (
        "The search engine Brave allows 1 search every 10 seconds and is busy; "
        "try again in a moment."
    )


def test_when_the_fallback_fails_too_the_error_names_both(
    web_search, search, engine_replies, recording
):
    for _ in range(2):
        engine_replies.get(brave.URL, status=503)
        engine_replies.post(duckduckgo.URL, body=recording("duckduckgo_anomaly.html"))
    tool = web_search(engine="brave", apiKey=BRAVE_KEY, fallbackEngine="duckduckgo")
    with pytest.raises(ToolError) as info:
        search(tool)
    assert info.value.message == (
        "Brave search failed (HTTP 503). The fallback engine DuckDuckGo failed too: DuckDuckGo "
        "blocked the search. Try again later, or pick another engine in the web search settings."
    )
    # Someone who cannot change the admin's engines reads the same: what happened to each.
    with pytest.raises(ToolError) as info:
        search(tool, roles=["user"])
    assert info.value.message == (
        "Brave search failed (HTTP 503). The fallback engine DuckDuckGo failed too: DuckDuckGo "
        "blocked the search. Try again later, or pick another engine in the web search settings."
    )


def test_a_rejected_key_is_not_covered_by_the_fallback(web_search, search, engine_replies, searxng):
    engine_replies.get(brave.URL, status=401)
    tool = web_search(
        engine="brave", apiKey=BRAVE_KEY, fallbackEngine="searxng", fallbackBaseURL=searxng.url
    )
    with pytest.raises(ToolError) as info:
        search(tool)
    assert info.value.message == "The Brave API key was rejected."
    assert searxng.seen == []


def test_the_fallback_never_serves_a_caller_outside_admin_engine_roles(
    web_search, search, engine_replies, searxng
):
    engine_replies.get(brave.URL, status=429)
    engine_replies.get(brave.URL, status=429)
    tool = web_search(
        engine="brave",
        apiKey=BRAVE_KEY,
        adminEngineRoles=["admin"],
        fallbackEngine="searxng",
        fallbackBaseURL=searxng.url,
    )
    mine = {"engine": "brave", "apiKey": USER_KEY}
    with pytest.raises(ToolError) as info:
        search(tool, roles=["user"], settings=mine)
    assert info.value.message == "Brave's rate limit was reached."
    assert searxng.seen == []
    # The admin's own engine still has the fallback.
    output, _ = search(tool, roles=["user", "admin"])
    assert output["engine"] == "searxng" and len(searxng.seen) == 1


@pytest.mark.parametrize("roles", [["user"], ["user", "admin"]])
def test_a_users_own_engine_failing_gives_the_users_error_not_the_fallbacks_results(
    web_search, search, engine_replies, searxng, roles
):
    """Regression (issue 24): a user's own engine that was rate-limited was answered by the
    admin's fallback, on the admin's key, although the user chose an engine of their own."""
    engine_replies.get(brave.URL, status=429, json={"error": {"detail": "Too many requests"}})
    tool = web_search(
        engine="brave", apiKey=BRAVE_KEY, fallbackEngine="searxng", fallbackBaseURL=searxng.url
    )
    with pytest.raises(ToolError) as info:
        search(tool, roles=roles, settings={"engine": "brave", "apiKey": USER_KEY})
    assert info.value.message == (
        'Brave\'s rate limit was reached. Brave said: "Too many requests"'
    )
    assert searxng.seen == []
    assert engine_replies.calls[0].request.headers["X-Subscription-Token"] == USER_KEY


def test_a_fallback_needs_its_own_credentials_and_cannot_be_the_engine_again():
    with pytest.raises(PluginConfigError) as info:
        start_plugin(plugin, {"engine": "duckduckgo", "fallbackEngine": "tavily"})
    assert info.value.fields == {"fallbackApiKey": ["Tavily needs an API key."]}
    with pytest.raises(PluginConfigError) as info:
        start_plugin(
            plugin,
            {"engine": "brave", "apiKey": "k", "fallbackEngine": "brave", "fallbackApiKey": "k"},
        )
    assert list(info.value.fields) == ["fallbackEngine"]
    # The same engine with a second key is a fallback worth having.
    start_plugin(
        plugin, {"engine": "brave", "apiKey": "k", "fallbackEngine": "brave", "fallbackApiKey": "j"}
    )


def test_a_stored_fallback_key_is_dropped_when_the_fallback_engine_changes():
    stored = {"engine": "duckduckgo", "fallbackEngine": "brave", "fallbackApiKey": FALLBACK_KEY}
    same = merge_save(
        plugin.options_schema, stored, {"engine": "duckduckgo", "fallbackEngine": "brave"}
    )
    assert same["fallbackApiKey"] == FALLBACK_KEY
    changed = merge_save(
        plugin.options_schema, stored, {"engine": "duckduckgo", "fallbackEngine": "kagi"}
    )
    assert "fallbackApiKey" not in changed


@pytest.fixture
def failures():
    """The (engine id, reason) of every failed search reported through the plugin API."""
    heard: list[tuple[str, str]] = []
    remove = on_search_failure(lambda engine, reason: heard.append((engine, reason)))
    yield heard
    remove()


def test_each_engine_that_fails_a_search_is_told_with_why_whether_or_not_a_fallback_answered(
    web_search, search, engine_replies, recording, searxng, failures
):
    engine_replies.get(brave.URL, status=429, body=recording("brave_429.json"))
    rescued = web_search(
        engine="brave", apiKey=BRAVE_KEY, fallbackEngine="searxng", fallbackBaseURL=searxng.url
    )
    assert search(rescued)[0]["engine"] == "searxng"
    assert failures == [("brave", "rate-limited")]

    failures.clear()
    engine_replies.get(brave.URL, status=503)
    engine_replies.post(duckduckgo.URL, body=recording("duckduckgo_anomaly.html"))
    with pytest.raises(ToolError):
        search(web_search(engine="brave", apiKey=BRAVE_KEY, fallbackEngine="duckduckgo"))
    assert failures == [("brave", "down"), ("duckduckgo", "blocked")]

    failures.clear()
    engine_replies.get(brave.URL, status=401)
    with pytest.raises(ToolError):
        search(web_search(engine="brave", apiKey=BRAVE_KEY))
    assert failures == [("brave", "error")]


def test_a_search_refused_by_the_users_quota_is_no_failure_of_the_engine(
    web_search, search, searxng, failures
):
    used_up = DayQuotas({SEARCHES: 0})
    with pytest.raises(ToolError):
        search(web_search(engine="searxng", baseURL=searxng.url), quotas=used_up)
    assert failures == [] and searxng.seen == []


def test_an_engine_that_says_how_long_its_rate_limit_lasts_is_not_asked_until_then(
    web_search, search, engine_replies, searxng, redis_url
):
    """A 429 with Retry-After holds the engine's bucket: the next searches go to the fallback
    at once, or (without one) say when to try again, instead of asking the engine again."""
    rates = RedisRates(redis.Redis.from_url(redis_url))
    key = f"brave-{uuid.uuid4().hex}"  # a bucket of this test's own
    engine_replies.get(brave.URL, status=429, json={}, headers={"Retry-After": "150"})
    tool = web_search(
        engine="brave", apiKey=key, fallbackEngine="searxng", fallbackBaseURL=searxng.url
    )
    first, _ = search(tool, rates=rates, signal=Signal.after(20))
    assert first["fallbackReason"] == "Brave's rate limit was reached."
    again, _ = search(tool, rates=rates, signal=Signal.after(20))
    assert again["engine"] == "searxng" and len(searxng.seen) == 2
    assert again["fallbackReason"] == (
        "The search engine Brave allows 1 search a second and is busy; try again in 3 minutes."
    )
    alone = web_search(engine="brave", apiKey=key)
    with pytest.raises(ToolError) as info:
        search(alone, rates=rates, signal=Signal.after(20))
    assert info.value.message == (
        "The search engine Brave allows 1 search a second and is busy; try again in 3 minutes."
    )
    assert [c.request.url.startswith(brave.URL) for c in engine_replies.calls] == [True]


def test_a_retry_after_beyond_ten_minutes_holds_the_engine_for_ten(
    web_search, search, engine_replies, redis_url
):
    rates = RedisRates(redis.Redis.from_url(redis_url))
    key = f"brave-{uuid.uuid4().hex}"
    engine_replies.get(brave.URL, status=429, json={}, headers={"Retry-After": "86400"})
    tool = web_search(engine="brave", apiKey=key)
    for _ in range(2):
        with pytest.raises(ToolError) as info:
            search(tool, rates=rates, signal=Signal.after(20))
    assert info.value.message.endswith("is busy; try again in 10 minutes.")
