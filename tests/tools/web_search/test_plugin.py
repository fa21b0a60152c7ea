"""Acceptance criteria: options and settings from the engine list, the tool, the catalog."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
from marshmallow import ValidationError

from tests.support.processes import free_port
from tests.tools.web_search.conftest import reply_with
from tools.api import PluginConfigError, ToolError
from tools.schema import json_schema
from tools.testing import start_plugin, tool_context_for_test
from tools.web_search import ENGINES, create_web_search, plugin
from tools.web_search.engine import EngineRequest, Search, SearchEngine, SearchResult, load_json
from tools.web_search.engines import brave

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
        "rate": None,
        "dailyCap": None,
        "fallbackEngine": "none",
        "fallbackApiKey": None,
        "fallbackBaseURL": None,
        "fallbackRate": None,
        "fallbackDailyCap": None,
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
    schema = plugin.settings_schema_for(
        {"userEngines": True, "adminEngineRoles": ["user"]}, ["user"]
    )
    assert schema().load({})["engine"] == "default"
    with pytest.raises(ValidationError):
        schema().load({"engine": "bing"})


def test_user_settings_refuse_an_engine_without_its_key_unless_it_is_the_admins():
    schema = plugin.settings_schema_for({"userEngines": True, "engine": "duckduckgo"})
    with pytest.raises(ValidationError) as refused:
        schema().load({"engine": "kagi", "apiKey": " "})
    assert refused.value.messages == {
        "apiKey": ["Kagi needs an API key. Enter yours, or pick another engine."]
    }
    assert schema().load({"engine": "kagi", "apiKey": "k"})["apiKey"] == "k"
    admins_kagi = plugin.settings_schema_for(
        {"userEngines": True, "engine": "kagi", "adminEngineRoles": ["user"]}, ["user"]
    )
    assert admins_kagi().load({"engine": "kagi"})["apiKey"] is None


def test_user_settings_refuse_the_admins_engine_to_a_user_outside_admin_engine_roles():
    options = {"userEngines": True, "engine": "kagi", "adminEngineRoles": ["admin"]}
    outsider = plugin.settings_schema_for(options, ["user"])
    with pytest.raises(ValidationError) as refused:
        outsider().load({})
    assert refused.value.messages == {
        "engine": [
            "The admin's engine is not open to your account. Pick an engine of your own and "
            "enter its key, or ask an administrator to let you use theirs."
        ]
    }
    with pytest.raises(ValidationError) as refused:
        outsider().load({"engine": "kagi"})
    assert refused.value.messages == {
        "apiKey": ["Kagi needs an API key. Enter yours, or pick another engine."]
    }
    assert outsider().load({"engine": "kagi", "apiKey": "k"})["apiKey"] == "k"
    insider = plugin.settings_schema_for(options, ["user", "admin"])
    assert insider().load({})["engine"] == "default"
    assert insider().load({"engine": "kagi"})["apiKey"] is None


def test_the_catalog_lists_every_installed_engine():
    assert plugin.catalog() == {
        "engines": [
            {
                "id": "duckduckgo",
                "name": "DuckDuckGo",
                "needsKey": False,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
                "ratePerSecond": 0.5,
            },
            {
                "id": "brave",
                "name": "Brave",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
                "ratePerSecond": 1.0,
            },
            {
                "id": "tavily",
                "name": "Tavily",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": [],
                "ratePerSecond": 1.67,
            },
            {
                "id": "searxng",
                "name": "SearXNG",
                "needsKey": False,
                "needsBaseURL": True,
                "operators": ["site:example.com", '"exact phrase"', "-term"],
                "ratePerSecond": 1.0,
            },
            {
                "id": "kagi",
                "name": "Kagi",
                "needsKey": True,
                "needsBaseURL": False,
                "operators": ["site:example.com", '"exact phrase"', "-term", "filetype:pdf"],
                "ratePerSecond": 1.0,
            },
        ]
    }


def test_the_plugin_is_loaded_like_any_other():
    from tools.host import load_plugin

    assert load_plugin("tools.web_search") is plugin and plugin.id == "web_search"
    assert tool_context_for_test()[0].roles == ["user"]


def test_the_admin_form_says_web_search_stays_off_until_switched_on_when_not_on_by_default():
    """Regression: "Users may switch it: Users may turn it off." while web search was off for
    everyone until ticked, and an admin who chose an engine did not learn why nobody searched."""
    properties = json_schema(plugin.options_schema)["properties"]
    assert properties["enabledByDefault"]["default"] is False
    assert "stays off until a user switches it on" in properties["enabledByDefault"]["description"]
    assert properties["userToggle"]["description"] == (
        "Users may turn it on or off in their Settings."
    )


ADMIN_CAN_FIX = "Only an administrator can fix this: tell one."


def refusal(search, tool, **context) -> str:
    """Return the sentence of the ToolError the search raises."""
    with pytest.raises(ToolError) as told:
        search(tool, **context)
    return told.value.message


def test_a_user_on_the_admins_unreachable_engine_reads_what_happened_and_who_can_fix_it(
    web_search, search, engine_replies, caplog
):
    """Regression (issue 24): users read only "The site's search engine failed … Tell an
    administrator", which hid what happened from them and from the model."""
    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    engine_replies.add_passthru(down)
    tool = web_search(engine="searxng", baseURL=down)
    caplog.set_level(logging.WARNING, logger="lookout.plugins.web_search")
    assert refusal(search, tool, roles=["user"], user="alice") == (
        f"SearXNG could not be reached. {ADMIN_CAN_FIX}"
    )
    [record] = [r for r in caplog.records if r.name == "lookout.plugins.web_search"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "web_search failed with the admin's engine=searxng user=alice: "
        "SearXNG could not be reached. Check its address, or try again later."
    )
    assert refusal(search, tool, roles=["user", "admin"]) == (
        "SearXNG could not be reached. Check its address, or try again later."
    )


@pytest.mark.parametrize(
    ("status", "body", "told"),
    [
        (
            401,
            {"error": {"detail": "The provided subscription token is invalid."}},
            'The Brave API key was rejected. Brave said: "The provided subscription token is '
            f'invalid." {ADMIN_CAN_FIX}',
        ),
        (
            422,
            {"error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "Token invalid."}},
            f'The Brave API key was rejected. Brave said: "Token invalid." {ADMIN_CAN_FIX}',
        ),
        (
            500,
            {"error": {"detail": "Internal error, try again."}},
            'Brave search failed (HTTP 500). Brave said: "Internal error, try again."',
        ),
        (429, {}, "Brave's rate limit was reached."),
    ],
)
def test_a_user_on_the_admins_engine_reads_the_specs_sentence_with_the_engines_words(
    web_search, search, engine_replies, status, body, told
):
    """Regression (issue 24): the spec's own sentence, word for word, then who can fix it
    where only an administrator can."""
    engine_replies.get(brave.URL, status=status, json=body)
    tool = web_search(engine="brave", apiKey=BRAVE_KEY)
    assert refusal(search, tool, roles=["user"]) == told


def test_a_user_on_the_admins_engine_reads_that_duckduckgo_blocked_the_search(
    web_search, search, engine_replies
):
    engine_replies.post("https://html.duckduckgo.com/html/", status=202, body="<html></html>")
    tool = web_search(engine="duckduckgo")
    assert refusal(search, tool, roles=["user"]) == (
        "DuckDuckGo blocked the search. Try again later, or pick another engine in the web "
        "search settings."
    )


def test_a_user_on_the_admins_engine_reads_that_it_timed_out(
    web_search, search, loopback, monkeypatch
):
    """The engine's time-out is told as it is: nothing only an administrator can fix."""
    monkeypatch.setattr("tools.web_search.search.TIMEOUT_SECONDS", 0.3)
    stalled = threading.Event()
    server = loopback(lambda handler: stalled.wait(30))
    tool = web_search(engine="searxng", baseURL=server.url)
    try:
        message = refusal(search, tool, roles=["user"])
    finally:
        stalled.set()
    assert message == "SearXNG did not answer within 0.3 seconds. Try again later."


class EchoingEngine(SearchEngine):
    """An engine at a base URL with a key, whose error bodies repeat what it was sent."""

    id = "echoing"
    name = "Echoing"
    needs_key = True
    needs_base_url = True

    def request(self, search: Search) -> EngineRequest:
        return EngineRequest(
            "GET",
            f"{search.base_url}/search",
            params={"q": search.query},
            headers={"Authorization": f"Bearer {search.api_key}"},
        )

    def parse(self, body: str) -> list[SearchResult]:
        return []

    def error_detail(self, body):
        return body.get("error")


@pytest.mark.parametrize("status", [400, 401, 500])
def test_neither_the_key_nor_the_credentials_of_the_admins_url_ever_show(search, loopback, status):
    """Keys and URLs with credentials never appear, whoever reads the error."""
    secret_key = "sk-echo-9b8a7c6d5e4f"

    def echo(handler):
        said = (
            f"token {handler.headers.get('Authorization')} refused for "
            f"http://lookout:pa55-w0rd@127.0.0.1{handler.path}; pa55-w0rd is wrong"
        )
        reply_with(json.dumps({"error": said}), status=status)(handler)

    server = loopback(echo)
    base_url = server.url.replace("http://", "http://lookout:pa55-w0rd@")
    custom = create_web_search([EchoingEngine()])
    options = {"engine": "echoing", "apiKey": secret_key, "baseURL": base_url}
    tool = start_plugin(custom, options)["web_search"]
    for roles in (["user"], ["user", "admin"]):
        message = refusal(search, tool, roles=roles)
        assert "Echoing said:" in message
        assert secret_key not in message and "pa55-w0rd" not in message
        assert "lookout:" not in message
