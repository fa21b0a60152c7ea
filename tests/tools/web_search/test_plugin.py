"""The plugin's acceptance criteria: options from the engine list, engine resolution, the tool."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import requests
from marshmallow import ValidationError

from tools.api import PluginConfigError, ToolError, ToolRefused
from tools.net import GuardedSession
from tools.schema import json_schema
from tools.testing import start_plugin, tool_context_for_test
from tools.web_search import ENGINES, create_web_search, plugin
from tools.web_search.engine import EngineRequest, Search, SearchEngine, SearchResult, load_json
from tools.web_search.engines import brave, kagi

HERE = Path(__file__).parent
BRAVE_KEY = "admin-brave-key-0001"
USER_KEY = "user-own-key-0002"
ONE_RESULT = {"type": "search", "web": {"results": [{"title": "T", "url": "https://a.example/"}]}}


class ExampleEngine(SearchEngine):
    """An engine that exists only in this test."""

    id = "example"
    name = "Example"
    needs_key = True
    operators = ("near:place",)

    def request(self, search: Search) -> EngineRequest:
        return EngineRequest("GET", "https://search.example/api", params={"q": search.query})

    def parse(self, body: str) -> list[SearchResult]:
        from marshmallow import Schema, fields

        class Body(Schema):
            hits = fields.List(fields.String(), required=True)

        return [SearchResult(h, f"https://{h}.example/", "") for h in load_json(body, Body)["hits"]]


def test_engine_enum_and_startup_checks_come_from_the_engine_list(engine_replies, search):
    custom = create_web_search([ExampleEngine()])
    engine = json_schema(custom.options_schema)["properties"]["engine"]
    assert engine["enum"] == ["example"] and engine["x-enum-labels"] == ["Example"]
    with pytest.raises(PluginConfigError) as info:
        start_plugin(custom, {"engine": "example"})
    assert info.value.fields == {"apiKey": ["Example needs an API key."]}
    with pytest.raises(PluginConfigError):
        start_plugin(custom, {"engine": "brave", "apiKey": "k"})
    tool = start_plugin(custom, {"engine": "example", "apiKey": "k"})["web_search"]
    assert tool.description.endswith("Supported operators: near:place.")
    settings = json_schema(custom.settings_schema_for({"userEngines": True}))["properties"]
    assert settings["engine"]["enum"] == ["default", "example"]
    assert settings["apiKey"]["x-show-when"] == {"engine": ["example"]}
    engine_replies.get("https://search.example/api", json={"hits": ["one", "two"]})
    assert search(tool)[0]["results"][1]["url"] == "https://two.example/"


def test_each_engine_adapter_has_recorded_response_tests():
    for engine in ENGINES:
        assert (HERE / f"test_{engine.id}.py").is_file(), engine.id
        assert list((HERE / "recordings").glob(f"{engine.id}_*")), engine.id


@pytest.mark.parametrize(
    ("options", "fields"),
    [
        ({}, {"engine": ["Missing data for required field."]}),
        ({"engine": "brave"}, {"apiKey": ["Brave needs an API key."]}),
        ({"engine": "tavily", "apiKey": "  "}, {"apiKey": ["Tavily needs an API key."]}),
        ({"engine": "kagi", "apiKey": None}, {"apiKey": ["Kagi needs an API key."]}),
        ({"engine": "searxng"}, {"baseURL": ["SearXNG needs a base URL."]}),
        ({"engine": "searxng", "baseURL": "ftp://x.example"}, {"baseURL": ["Not a valid URL."]}),
        (
            {"engine": "bing"},
            {"engine": ["Must be one of: duckduckgo, brave, tavily, searxng, kagi."]},
        ),
        (
            {"engine": "duckduckgo", "maxResults": 21},
            {"maxResults": ["Must be greater than or equal to 1 and less than or equal to 20."]},
        ),
    ],
)
def test_options_without_an_engine_or_naming_a_keyed_engine_without_a_key_fail_startup(
    options, fields
):
    with pytest.raises(PluginConfigError) as info:
        start_plugin(plugin, options)
    assert info.value.fields == fields


def test_options_have_the_specs_defaults():
    options = plugin.options_schema().load({"engine": "searxng", "baseURL": "http://searxng:8080"})
    assert options == {
        "engine": "searxng",
        "apiKey": None,
        "baseURL": "http://searxng:8080",
        "adminEngineRoles": ["user"],
        "enabledByDefault": False,
        "userToggle": True,
        "userEngines": True,
        "maxResults": 5,
    }


def test_the_tool_is_untrusted_with_a_20_second_deadline_and_the_admins_switches():
    tool = start_plugin(
        plugin, {"engine": "duckduckgo", "enabledByDefault": True, "userToggle": False}
    )["web_search"]
    assert (tool.name, tool.untrusted, tool.timeout_seconds) == ("web_search", True, 20)
    assert (tool.default_enabled, tool.user_toggle) == (True, False)
    assert tool.json_schema()["properties"]["query"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 400,
        "description": "What to search for.",
    }
    with pytest.raises(ToolError):
        tool.validate_input({"query": "x" * 401})


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
    web_search, search, loopback, replying, recording, monkeypatch
):
    body = recording("searxng_results.json")
    admins, users_private = loopback(replying(body)), loopback(replying(body))
    public = loopback(replying(body), host="127.0.0.2")
    tool = web_search(engine="searxng", baseURL=admins.url)
    guarded = GuardedSession(address_allowed=lambda ip: ip == "127.0.0.2")
    with pytest.raises(ToolRefused) as info:
        search(tool, fetch=guarded, settings={"engine": "searxng", "baseURL": users_private.url})
    assert info.value.message == f"Fetching {users_private.url}/search is not allowed."
    assert users_private.seen == []
    output, _ = search(tool, fetch=guarded, settings={"engine": "searxng", "baseURL": public.url})
    assert len(output["results"]) == 3 and len(public.seen) == 1 and admins.seen == []


def test_results_are_cut_to_max_results_and_each_is_cited(
    web_search, search, engine_replies, recording
):
    body = json.loads(recording("brave_results.json"))
    body["web"]["results"] += [
        {"title": f"Extra {n}", "url": f"https://extra{n}.example/", "description": ""}
        for n in range(10)
    ]
    engine_replies.get(brave.URL, json=body)
    output, citations = search(web_search(engine="brave", apiKey=BRAVE_KEY, maxResults=4))
    assert len(output["results"]) == 4
    assert [(c.url, c.title) for c in citations] == [
        (r["url"], r["title"]) for r in output["results"]
    ]


def test_the_tool_description_lists_the_admins_engines_operators():
    tool = start_plugin(plugin, {"engine": "brave", "apiKey": "k"})["web_search"]
    assert tool.description == (
        "Search the web. Returns a title, URL, and snippet for each result. Supported operators: "
        'site:example.com, "exact phrase", -term, filetype:pdf.'
    )
    tavily = start_plugin(plugin, {"engine": "tavily", "apiKey": "k"})["web_search"]
    assert (
        tavily.description == "Search the web. Returns a title, URL, and snippet for each result."
    )


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


def test_the_key_field_shows_only_for_keyed_engines_and_the_base_url_only_for_based_ones():
    for schema in (plugin.options_schema, plugin.settings_schema_for({"userEngines": True})):
        properties = json_schema(schema)["properties"]
        assert properties["apiKey"]["x-show-when"] == {"engine": ["brave", "tavily", "kagi"]}
        assert properties["apiKey"]["writeOnly"] is True
        assert properties["baseURL"]["x-show-when"] == {"engine": ["searxng"]}
    settings = json_schema(plugin.settings_schema_for({"userEngines": True}))["properties"]
    assert settings["engine"]["default"] == "default"
    assert "default" not in settings["apiKey"]["x-show-when"]["engine"]
    assert "default" not in settings["baseURL"]["x-show-when"]["engine"]


def test_user_settings_are_validated_against_the_installed_engines():
    schema = plugin.settings_schema_for({"userEngines": True})
    assert schema().load({})["engine"] == "default"
    with pytest.raises(ValidationError):
        schema().load({"engine": "bing"})


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


def test_the_catalog_lists_every_installed_engine():
    assert plugin.catalog() == {
        "engines": [
            {
                "id": "duckduckgo",
                "name": "DuckDuckGo",
                "needsKey": False,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
            },
            {
                "id": "brave",
                "name": "Brave",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
            },
            {
                "id": "tavily",
                "name": "Tavily",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": [],
            },
            {
                "id": "searxng",
                "name": "SearXNG",
                "needsKey": False,
                "needsBaseURL": True,
                "operators": ["site:example.com", '"exact phrase"', "-term"],
            },
            {
                "id": "kagi",
                "name": "Kagi",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
            },
        ]
    }


def test_the_plugin_is_loaded_like_any_other():
    from tools.host import load_plugin

    assert load_plugin("tools.web_search") is plugin and plugin.id == "web_search"
    assert tool_context_for_test()[0].roles == ["user"]
