"""Admins' plugin options over the API: statuses, validated saves, kept secrets, catalogs."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import PluginOptions

PLUGINS = ",".join(
    [
        "tests.tools.sample_plugins.alpha",
        "tests.tools.sample_plugins.keyed",
        "tests.tools.sample_plugins.crashing",
        "tests.tools.sample_plugins.absent",
        "tools.web_search",
        "tools.web_fetch",
        "tools.pdf",
    ]
)
OPTIONS = "/api/admin/plugins/web_search/options"


@pytest.fixture
def app(make_app):
    """An app listing sample plugins (one crashing, one missing) and the built-in ones."""
    return make_app(LOOKOUT_PLUGINS=PLUGINS)


@pytest.fixture
def admin(signed_in_client):
    """A client signed in as an admin."""
    return signed_in_client("root", admin=True)


def statuses(client) -> dict[str, dict]:
    """Return the admin plugin list by plugin id."""
    response = client.get("/api/admin/plugins")
    assert response.status_code == 200, response.get_json()
    return {plugin["id"]: plugin for plugin in response.get_json()["plugins"]}


def stored_options(app, plugin_id: str) -> dict | None:
    """Return the options the database holds for a plugin."""
    with app.app_context():
        row = db.session.get(PluginOptions, plugin_id)
        return None if row is None else dict(row.options)


def test_each_listed_plugin_shows_its_status_and_reason(app, admin):
    with app.app_context():  # stored options that no longer validate: failed, not unconfigured
        db.session.add(PluginOptions(plugin_id="keyed", options={"engine": "x"}))
        db.session.commit()
    plugins = statuses(admin)
    assert {id: p["status"] for id, p in plugins.items()} == {
        "alpha": "active",
        "keyed": "failed",
        "crashing": "failed",
        "absent": "failed",
        "web_search": "needs-configuration",
        "web_fetch": "active",
        "pdf": "active",
    }
    assert plugins["keyed"]["fields"] == {"apiKey": ["apiKey is required."]}
    assert plugins["crashing"]["reason"] == "The plugin's setup failed: boom"
    assert "could not be imported" in plugins["absent"]["reason"]
    assert plugins["web_search"]["fields"]["engine"] == ["Search engine is required."]
    assert plugins["web_search"]["schema"]["properties"]["apiKey"]["writeOnly"] is True
    assert plugins["web_search"]["schema"]["x-order"][:3] == ["engine", "apiKey", "baseURL"]
    assert plugins["web_fetch"]["reason"] is None
    assert plugins["web_fetch"]["tools"] == ["web_fetch"]


def test_invalid_options_are_refused_field_by_field_and_nothing_is_stored(app, admin):
    for body, field, message in [
        ({"engine": "brave"}, "apiKey", "Brave needs an API key."),
        ({"engine": "searxng"}, "baseURL", "SearXNG needs a base URL."),
        ({"engine": "altavista"}, "engine", None),
        ({"engine": "duckduckgo", "maxResults": 50}, "maxResults", None),
    ]:
        response = admin.put(OPTIONS, json=body)
        assert response.status_code == 400, body
        fields = response.get_json()["error"]["fields"]
        assert field in fields, fields
        if message:
            assert fields[field] == [message]
    assert stored_options(app, "web_search") is None
    assert statuses(admin)["web_search"]["status"] == "needs-configuration"


@pytest.mark.parametrize("field", ["apiKey", "fallbackApiKey"])
def test_an_engine_key_a_header_cannot_carry_is_refused_in_words(app, admin, field):
    """Regression: an engine key holding "é" was saved, then each search sent it as one
    Latin-1 byte (the engine said the key was rejected); one holding "€" failed every search
    with an unexpected error. Provider keys were refused in these words already."""
    body = {"engine": "brave", "apiKey": "bk", "fallbackEngine": "tavily", "fallbackApiKey": "tk"}
    response = admin.put(OPTIONS, json={**body, field: "sk-caf\u00e9"})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["fields"] == {
        field: [
            "The API key holds 'é', which an HTTP header cannot carry: a key is ASCII letters, "
            "digits and punctuation. Copy it again from the engine's page."
        ]
    }
    assert stored_options(app, "web_search") is None


def test_saving_valid_options_makes_the_plugin_active(app, admin):
    response = admin.put(OPTIONS, json={"engine": "duckduckgo"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["status"] == "active"
    search = statuses(admin)["web_search"]
    assert search["status"] == "active"
    assert search["reason"] is None
    assert search["tools"] == ["web_search"]
    assert search["options"]["engine"] == "duckduckgo"
    assert stored_options(app, "web_search") == {"engine": "duckduckgo"}


def test_a_saved_key_is_masked_and_a_blank_one_keeps_it(app, admin):
    response = admin.put(OPTIONS, json={"engine": "brave", "apiKey": "brave-key-1"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["secretsSet"] == {"apiKey": True, "fallbackApiKey": False}
    assert "apiKey" not in response.get_json()["options"]
    assert "brave-key-1" not in admin.get("/api/admin/plugins").get_data(as_text=True)
    again = admin.put(OPTIONS, json={"engine": "brave", "apiKey": "", "maxResults": 3})
    assert again.status_code == 200, again.get_json()
    assert stored_options(app, "web_search")["apiKey"] == "brave-key-1"
    assert stored_options(app, "web_search")["maxResults"] == 3


def test_changing_the_engine_drops_the_stored_key_unless_a_new_one_is_given(app, admin):
    admin.put(OPTIONS, json={"engine": "brave", "apiKey": "brave-key-1"})
    refused = admin.put(OPTIONS, json={"engine": "tavily", "apiKey": ""})
    assert refused.status_code == 400
    assert refused.get_json()["error"]["fields"]["apiKey"] == ["Tavily needs an API key."]
    assert stored_options(app, "web_search")["apiKey"] == "brave-key-1"
    assert admin.put(OPTIONS, json={"engine": "tavily", "apiKey": "tk"}).status_code == 200
    assert stored_options(app, "web_search")["apiKey"] == "tk"
    assert admin.put(OPTIONS, json={"engine": "duckduckgo"}).status_code == 200
    assert "apiKey" not in stored_options(app, "web_search")
    assert statuses(admin)["web_search"]["secretsSet"] == {"apiKey": False, "fallbackApiKey": False}


def test_the_web_search_catalog_lists_its_engines(admin):
    response = admin.get("/api/admin/plugins/web_search/catalog")
    assert response.status_code == 200
    engines = {engine["id"]: engine for engine in response.get_json()["engines"]}
    assert {"brave", "duckduckgo", "searxng"} <= set(engines)
    for engine in engines.values():
        assert set(engine) == {
            "id",
            "name",
            "needsKey",
            "needsBaseURL",
            "operators",
            "ratePerSecond",
        }
    assert engines["duckduckgo"]["needsKey"] is False
    assert engines["brave"]["needsKey"] is True
    assert engines["searxng"]["needsBaseURL"] is True
    assert admin.get("/api/admin/plugins/alpha/catalog").status_code == 404


def test_admin_routes_refuse_other_users(signed_in_client, client):
    user = signed_in_client("alice")
    assert user.get("/api/admin/plugins").status_code == 403
    assert user.put(OPTIONS, json={"engine": "duckduckgo"}).status_code == 403
    assert user.get("/api/admin/plugins/web_search/catalog").status_code == 403
    assert client.get("/api/admin/plugins").status_code == 401


def test_another_process_sees_saved_options_without_a_restart(app, make_app, admin):
    other = make_app(DATABASE_URL=app.config["DATABASE_URL"], LOOKOUT_PLUGINS=PLUGINS)
    other_admin = other.test_client()
    made = admin.post("/api/tokens", json={"name": "other", "scopes": ["admin"]})
    token = made.get_json()["token"]
    headers = {"Authorization": f"Bearer {token}"}

    def other_status() -> str:
        response = other_admin.get("/api/admin/plugins", headers=headers)
        return {p["id"]: p["status"] for p in response.get_json()["plugins"]}["web_search"]

    assert other_status() == "needs-configuration"  # its host is built now
    assert admin.put(OPTIONS, json={"engine": "duckduckgo"}).status_code == 200
    assert other_status() == "active"


def test_an_engine_saved_off_by_default_says_that_nobody_gets_web_search(app, admin):
    """Regression: after picking an engine nothing said that "On by default" starts unticked."""
    saved = admin.put(OPTIONS, json={"engine": "duckduckgo"}).get_json()
    assert saved["notices"][0] == (
        "Nobody gets web_search yet: it is off by default, so only users who switch it on in "
        "their Settings get it. To offer it to everyone, tick “On by default” below and save."
    )
    locked = admin.put(OPTIONS, json={"engine": "duckduckgo", "userToggle": False}).get_json()
    assert locked["notices"][0].startswith(
        "Nobody gets web_search: it is off by default and users may not switch it on."
    )
    on = admin.put(OPTIONS, json={"engine": "duckduckgo", "enabledByDefault": True}).get_json()
    assert on["notices"] == [WHO_SEARCHES]
    assert statuses(admin)["web_fetch"]["notices"] == []  # on by default: nothing to say
    assert statuses(admin)["web_search"]["title"] == "Web search"


WHO_SEARCHES = (
    "Users holding the role user search with DuckDuckGo, the engine set below; other users need "
    "an engine of their own in their web search settings."
)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({}, WHO_SEARCHES),
        (
            {"adminEngineRoles": ["admin", "staff"], "userEngines": False},
            "Only users holding the roles admin or staff are offered web_search, with DuckDuckGo: "
            "users may not bring their own engine, so nobody else could search.",
        ),
        (
            {"adminEngineRoles": [], "userEngines": False},
            "Nobody is offered web_search: no role may search with the engine set below, and "
            "users may not bring their own engine.",
        ),
    ],
)
def test_the_admin_page_says_which_roles_get_web_search(admin, options, said):
    """Issue 24: the admin read which roles may use the engine, not who gets search at all."""
    options = {"engine": "duckduckgo", "enabledByDefault": True, **options}
    assert admin.put(OPTIONS, json=options).get_json()["notices"] == [said]
    assert statuses(admin)["web_search"]["notices"] == [said]
