"""Engine resolution: the admin's engine, a user's own, roles, and which session is used."""

from __future__ import annotations

import logging

import pytest
import requests

from tools.api import ToolError, ToolRefused
from tools.net import GuardedSession
from tools.web_search import plugin
from tools.web_search.engines import brave, kagi

BRAVE_KEY = "admin-brave-key-0001"
USER_KEY = "user-own-key-0002"
ONE_RESULT = {"type": "search", "web": {"results": [{"title": "T", "url": "https://a.example/"}]}}


@pytest.fixture
def admin_brave(web_search):
    return web_search(engine="brave", apiKey=BRAVE_KEY, maxResults=3)


def _token(engine_replies, index=0):
    return engine_replies.calls[index].request.headers.get("X-Subscription-Token")


def test_with_the_user_engine_on_default_the_admins_engine_and_key_are_used(
    admin_brave, search, engine_replies
):
    engine_replies.get(brave.URL, json=ONE_RESULT)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(admin_brave, settings={})
    search(admin_brave, settings={"engine": "default", "apiKey": USER_KEY})
    assert _token(engine_replies, 0) == _token(engine_replies, 1) == BRAVE_KEY


def test_a_user_engine_uses_the_users_key_and_falls_back_to_the_admins_only_for_the_admins_engine(
    admin_brave, search, engine_replies
):
    engine_replies.get(brave.URL, json=ONE_RESULT)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(admin_brave, settings={"engine": "brave", "apiKey": USER_KEY})
    search(admin_brave, settings={"engine": "brave", "apiKey": ""})
    assert [_token(engine_replies, 0), _token(engine_replies, 1)] == [USER_KEY, BRAVE_KEY]


def test_a_user_engine_errors_when_a_required_key_or_base_url_is_missing(admin_brave, search):
    with pytest.raises(ToolError) as info:
        search(admin_brave, settings={"engine": "kagi"})
    assert info.value.message == "Add your Kagi API key in the web search settings."
    with pytest.raises(ToolError) as info:
        search(admin_brave, settings={"engine": "searxng", "baseURL": ""})
    assert info.value.message == "Add your SearXNG base URL in the web search settings."


def test_a_user_engine_sends_the_users_key_to_their_engine(admin_brave, search, engine_replies):
    engine_replies.get(kagi.URL, json={"data": []})
    search(admin_brave, settings={"engine": "kagi", "apiKey": USER_KEY})
    assert engine_replies.calls[0].request.headers["Authorization"] == f"Bot {USER_KEY}"


class RecordingSession(requests.Session):
    """A stand-in for ctx.fetch that records the URLs it was asked for and reaches nothing."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def request(self, method, url, *args, **kwargs):
        self.urls.append(url)
        raise requests.ConnectionError("the recording session reaches nothing")


def test_a_users_searxng_base_url_goes_through_the_guarded_fetch_and_the_admins_does_not(
    web_search, search, loopback, replying, recording
):
    admins = loopback(replying(recording("searxng_results.json")))
    tool = web_search(engine="searxng", baseURL=admins.url)
    fetch = RecordingSession()
    assert len(search(tool, fetch=fetch)[0]["results"]) == 3
    assert search(tool, fetch=fetch, settings={"engine": "searxng"})[0]["results"]
    assert fetch.urls == [] and len(admins.seen) == 2
    with pytest.raises(ToolError):
        search(tool, fetch=fetch, settings={"engine": "searxng", "baseURL": "http://mine.example"})
    assert fetch.urls == ["http://mine.example/search"]


def test_a_users_base_url_on_a_private_address_is_refused_by_the_guard(
    web_search, search, loopback, replying, recording
):
    body = recording("searxng_results.json")
    admins, users_private = loopback(replying(body)), loopback(replying(body))
    public = loopback(replying(body), host="127.0.0.2")
    tool = web_search(engine="searxng", baseURL=admins.url)
    guarded = GuardedSession(address_allowed=lambda ip: ip == "127.0.0.2")
    with pytest.raises(ToolRefused) as info:
        search(tool, fetch=guarded, settings={"engine": "searxng", "baseURL": users_private.url})
    assert info.value.message == (
        f"Fetching {users_private.url}/search is not allowed: "
        "Lookout reads only public internet addresses."
    )
    assert users_private.seen == []
    output, _ = search(tool, fetch=guarded, settings={"engine": "searxng", "baseURL": public.url})
    assert len(output["results"]) == 3 and len(public.seen) == 1 and admins.seen == []


def test_with_user_engines_off_there_are_no_engine_settings_and_the_admins_engine_is_used(
    web_search, search, engine_replies
):
    assert plugin.settings_schema_for({"userEngines": False}) is None
    tool = web_search(engine="brave", apiKey=BRAVE_KEY, userEngines=False)
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(tool, settings={"engine": "kagi", "apiKey": USER_KEY})
    assert _token(engine_replies) == BRAVE_KEY


def test_a_user_outside_admin_engine_roles_cannot_use_the_admins_engine_but_can_use_their_own(
    web_search, search, engine_replies
):
    tool = web_search(engine="brave", apiKey=BRAVE_KEY, adminEngineRoles=["admin"])
    with pytest.raises(ToolError) as info:
        search(tool, roles=["user"], settings={})
    assert info.value.message == (
        "Add your own search engine in the web search settings to search the web."
    )
    with pytest.raises(ToolError) as info:
        search(tool, roles=["user"], settings={"engine": "brave"})
    assert info.value.message == "Add your Brave API key in the web search settings."
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(tool, roles=["user"], settings={"engine": "brave", "apiKey": USER_KEY})
    assert _token(engine_replies) == USER_KEY
    locked = web_search(
        engine="brave", apiKey=BRAVE_KEY, adminEngineRoles=["admin"], userEngines=False
    )
    with pytest.raises(ToolError) as info:
        search(locked, roles=["user"], settings={"engine": "brave", "apiKey": USER_KEY})
    assert info.value.message == "Web search isn't available to you."


def test_context_roles_decide_who_may_use_the_admins_engine(web_search, search, engine_replies):
    tool = web_search(engine="brave", apiKey=BRAVE_KEY, adminEngineRoles=["admin"])
    engine_replies.get(brave.URL, json=ONE_RESULT)
    search(tool, roles=["user", "admin"])
    assert _token(engine_replies) == BRAVE_KEY


def test_a_stored_engine_that_is_no_longer_installed_is_a_tool_error_and_a_warning(
    admin_brave, search, caplog
):
    caplog.set_level(logging.WARNING, logger="lookout.plugins.web_search")
    with pytest.raises(ToolError) as info:
        search(admin_brave, settings={"engine": "bing", "apiKey": USER_KEY})
    assert info.value.message == (
        "Your web search engine bing is no longer installed. Pick another engine in the web "
        "search settings."
    )
    [record] = [r for r in caplog.records if r.name == "lookout.plugins.web_search"]
    assert record.levelno == logging.WARNING and "bing" in record.getMessage()
    assert USER_KEY not in caplog.text
