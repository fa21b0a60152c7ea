"""Users' plugin settings over the API: tool switches, validated settings, secrets kept hidden."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import UserPluginSettings

PLUGINS = ",".join(
    [
        "tests.tools.sample_plugins.alpha",
        "tests.tools.sample_plugins.keyed",
        "tools.web_search",
        "tools.web_fetch",
        "tools.pdf",
    ]
)


@pytest.fixture
def app(make_app):
    """An app listing two sample plugins and the three built-in ones."""
    return make_app(LOOKOUT_PLUGINS=PLUGINS)


def listed(client) -> dict[str, dict]:
    """Return the settings list by plugin id."""
    response = client.get("/api/plugins/settings")
    assert response.status_code == 200, response.get_json()
    return {plugin["id"]: plugin for plugin in response.get_json()["plugins"]}


def stored_settings(app, user, plugin_id: str) -> dict | None:
    """Return what the database holds for the user's settings of a plugin."""
    with app.app_context():
        row = db.session.get(UserPluginSettings, (user.id, plugin_id))
        return None if row is None else dict(row.settings)


def test_only_plugins_with_user_settings_or_a_switchable_tool_are_listed(signed_in_client):
    plugins = listed(signed_in_client("alice"))
    # keyed and web_search need configuration; pdf has no tool and no settings.
    assert list(plugins) == ["alpha", "web_fetch"]
    assert plugins["alpha"]["tools"] == [
        {"name": "shout", "description": "Shout.", "enabled": True, "userToggle": False},
        {"name": "whisper", "description": "Whisper.", "enabled": False, "userToggle": True},
    ]
    assert plugins["web_fetch"]["tools"][0]["name"] == "web_fetch"
    assert plugins["web_fetch"]["tools"][0]["enabled"] is True
    assert plugins["web_fetch"]["schema"] is None
    assert plugins["alpha"]["schema"]["properties"]["token"]["writeOnly"] is True
    assert plugins["alpha"]["secretsSet"] == {"token": False}


def test_switching_a_tool_stores_the_choice_for_that_user_only(signed_in_client):
    alice, bob = signed_in_client("alice"), signed_in_client("bob")
    response = alice.put("/api/plugins/alpha/tools/whisper", json={"enabled": True})
    assert response.status_code == 200
    assert response.get_json() == {"name": "whisper", "enabled": True, "userToggle": True}
    assert listed(alice)["alpha"]["tools"][1]["enabled"] is True
    assert listed(bob)["alpha"]["tools"][1]["enabled"] is False
    alice.put("/api/plugins/alpha/tools/whisper", json={"enabled": False})
    assert listed(alice)["alpha"]["tools"][1]["enabled"] is False


def test_switching_another_plugins_tool_is_not_found(signed_in_client):
    client = signed_in_client("alice")
    response = client.put("/api/plugins/alpha/tools/web_fetch", json={"enabled": False})
    assert response.status_code == 404
    assert response.get_json()["error"]["message"] == "The plugin alpha has no tool web_fetch."
    missing = client.put("/api/plugins/nowhere/tools/whisper", json={"enabled": False})
    assert missing.status_code == 404


def test_switching_a_tool_without_user_toggle_is_refused(signed_in_client):
    client = signed_in_client("alice")
    response = client.put("/api/plugins/alpha/tools/shout", json={"enabled": False})
    assert response.status_code == 400
    assert listed(client)["alpha"]["tools"][0]["enabled"] is True


def test_a_switch_must_be_a_boolean(signed_in_client):
    response = signed_in_client("alice").put(
        "/api/plugins/alpha/tools/whisper", json={"enabled": "yes"}
    )
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {"enabled": ["Must be a boolean."]}


@pytest.mark.parametrize("value", [1, 0, "true"], ids=repr)
def test_a_switch_is_true_or_false_not_a_number_or_text(signed_in_client, value):
    """Fuzzing found 1 and 0 switching tools: marshmallow's Boolean takes 1 == True."""
    client = signed_in_client("alice")
    response = client.put("/api/plugins/alpha/tools/whisper", json={"enabled": value})
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {"enabled": ["Must be a boolean."]}
    assert listed(client)["alpha"]["tools"][1]["enabled"] is False


def test_invalid_settings_are_refused_field_by_field_and_not_stored(app, signed_in_client):
    client = signed_in_client("alice")
    response = client.put("/api/plugins/alpha/settings", json={"greeting": 5, "colour": "red"})
    assert response.status_code == 400
    fields = response.get_json()["error"]["fields"]
    assert fields["greeting"] == ["greeting must be text."]
    assert fields["colour"] == ["colour is not a setting Lookout knows: leave it out."]
    assert stored_settings(app, client.user, "alpha") is None


def test_a_secret_setting_is_never_sent_back(app, signed_in_client):
    client = signed_in_client("alice")
    response = client.put("/api/plugins/alpha/settings", json={"greeting": "yo", "token": "s3cr3t"})
    assert response.status_code == 200
    assert response.get_json() == {
        "id": "alpha",
        "settings": {"greeting": "yo"},
        "secretsSet": {"token": True},
    }
    page = client.get("/api/plugins/settings")
    assert "s3cr3t" not in page.get_data(as_text=True)
    alpha = listed(client)["alpha"]
    assert alpha["settings"] == {"greeting": "yo"}
    assert alpha["secretsSet"] == {"token": True}
    assert stored_settings(app, client.user, "alpha")["token"] == "s3cr3t"


def test_a_blank_secret_keeps_the_stored_one(app, signed_in_client):
    client = signed_in_client("alice")
    client.put("/api/plugins/alpha/settings", json={"greeting": "yo", "token": "s3cr3t"})
    response = client.put("/api/plugins/alpha/settings", json={"greeting": "hey", "token": ""})
    assert response.status_code == 200
    assert response.get_json()["secretsSet"] == {"token": True}
    assert stored_settings(app, client.user, "alpha") == {"greeting": "hey", "token": "s3cr3t"}
    client.put("/api/plugins/alpha/settings", json={"greeting": "hello"})
    assert stored_settings(app, client.user, "alpha")["token"] == "s3cr3t"


def test_deleting_settings_leaves_tool_switches_alone(app, signed_in_client):
    client = signed_in_client("alice")
    client.put("/api/plugins/alpha/tools/whisper", json={"enabled": True})
    client.put("/api/plugins/alpha/settings", json={"greeting": "yo", "token": "s3cr3t"})
    response = client.delete("/api/plugins/alpha/settings")
    assert response.status_code == 204
    alpha = listed(client)["alpha"]
    assert alpha["settings"] == {}
    assert alpha["secretsSet"] == {"token": False}
    assert alpha["tools"][1]["enabled"] is True
    assert stored_settings(app, client.user, "alpha") is None


def test_a_plugin_without_user_settings_has_none_to_save(signed_in_client):
    response = signed_in_client("alice").put("/api/plugins/web_fetch/settings", json={})
    assert response.status_code == 404


def test_a_users_search_key_is_dropped_when_the_engine_changes(app, signed_in_client):
    admin = signed_in_client("root", admin=True)
    saved = admin.put("/api/admin/plugins/web_search/options", json={"engine": "duckduckgo"})
    assert saved.status_code == 200, saved.get_json()
    client = signed_in_client("alice")
    assert listed(client)["web_search"]["secretsSet"] == {"apiKey": False}
    client.put("/api/plugins/web_search/settings", json={"engine": "brave", "apiKey": "bk"})
    assert listed(client)["web_search"]["secretsSet"] == {"apiKey": True}
    client.put("/api/plugins/web_search/settings", json={"engine": "duckduckgo", "apiKey": ""})
    assert stored_settings(app, client.user, "web_search")["apiKey"] is None
    client.put("/api/plugins/web_search/settings", json={"engine": "tavily", "apiKey": "tk"})
    assert stored_settings(app, client.user, "web_search")["apiKey"] == "tk"


def test_an_own_engine_that_needs_a_key_is_refused_without_one_and_nothing_stored_is_lost(
    app, signed_in_client
):
    """Regression: Brave without a key was "Saved." and failed only later, on the search card."""
    admin = signed_in_client("root", admin=True)
    admin.put("/api/admin/plugins/web_search/options", json={"engine": "duckduckgo"})
    client = signed_in_client("alice")
    saved = client.put(
        "/api/plugins/web_search/settings", json={"engine": "tavily", "apiKey": "tk"}
    )
    assert saved.status_code == 200, saved.get_json()
    before = stored_settings(app, client.user, "web_search")
    response = client.put(
        "/api/plugins/web_search/settings", json={"engine": "brave", "apiKey": ""}
    )
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["fields"] == {
        "apiKey": ["Brave needs an API key. Enter yours, or pick another engine."]
    }
    assert "Brave needs an API key" in error["message"]
    assert stored_settings(app, client.user, "web_search") == before
    assert listed(client)["web_search"]["settings"]["engine"] == "tavily"


def test_an_own_engine_key_a_header_cannot_carry_is_refused_in_words(app, signed_in_client):
    """Regression: a user's own engine key holding "é" was "Saved.", then failed each search."""
    admin = signed_in_client("root", admin=True)
    admin.put("/api/admin/plugins/web_search/options", json={"engine": "duckduckgo"})
    client = signed_in_client("alice")
    body = {"engine": "brave", "apiKey": "sk-caf\u00e9"}
    response = client.put("/api/plugins/web_search/settings", json=body)
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"]["fields"] == {
        "apiKey": [
            "The API key holds 'é', which an HTTP header cannot carry: a key is ASCII letters, "
            "digits and punctuation. Copy it again from the engine's page."
        ]
    }
    assert stored_settings(app, client.user, "web_search") is None


def test_an_own_engine_that_needs_a_base_url_is_refused_without_one(app, signed_in_client):
    admin = signed_in_client("root", admin=True)
    admin.put("/api/admin/plugins/web_search/options", json={"engine": "duckduckgo"})
    client = signed_in_client("alice")
    response = client.put("/api/plugins/web_search/settings", json={"engine": "searxng"})
    assert response.status_code == 400
    assert response.get_json()["error"]["fields"] == {
        "baseURL": ["SearXNG needs a base URL. Enter yours, or pick another engine."]
    }
    assert stored_settings(app, client.user, "web_search") is None


def test_the_admins_engine_may_be_picked_without_a_key_of_ones_own(app, signed_in_client):
    """The spec: a user who picks the admin's engine without a key still uses the admin's key."""
    admin = signed_in_client("root", admin=True)
    options = {"engine": "brave", "apiKey": "admins-key"}
    assert admin.put("/api/admin/plugins/web_search/options", json=options).status_code == 200
    client = signed_in_client("alice")
    response = client.put(
        "/api/plugins/web_search/settings", json={"engine": "brave", "apiKey": ""}
    )
    assert response.status_code == 200, response.get_json()
    assert stored_settings(app, client.user, "web_search")["engine"] == "brave"


@pytest.mark.parametrize(
    ("settings", "field", "sentence"),
    [
        (
            {"engine": "default"},
            "engine",
            "The admin's engine is not open to your account. Pick an engine of your own and "
            "enter its key, or ask an administrator to let you use theirs.",
        ),
        (
            {"engine": "brave", "apiKey": ""},
            "apiKey",
            "Brave needs an API key. Enter yours, or pick another engine.",
        ),
    ],
)
def test_a_user_outside_admin_engine_roles_cannot_save_the_admins_engine_without_a_key(
    app, signed_in_client, settings, field, sentence
):
    """Regression: the save succeeded, and the user learned only on searching that the admin's
    engine was not theirs to use."""
    admin = signed_in_client("root", admin=True)
    options = {"engine": "brave", "apiKey": "admins-key", "adminEngineRoles": ["admin"]}
    assert admin.put("/api/admin/plugins/web_search/options", json=options).status_code == 200
    client = signed_in_client("alice")
    response = client.put("/api/plugins/web_search/settings", json=settings)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["fields"] == {field: [sentence]}
    assert sentence in error["message"]
    assert stored_settings(app, client.user, "web_search") is None
    own = client.put("/api/plugins/web_search/settings", json={"engine": "brave", "apiKey": "k"})
    assert own.status_code == 200, own.get_json()
    # The admin, holding the role, may still pick it without a key.
    assert admin.put("/api/plugins/web_search/settings", json=settings).status_code == 200


def test_settings_need_a_signed_in_user(client):
    assert client.get("/api/plugins/settings").status_code == 401
    stranger = {"Authorization": "Bearer not-a-token"}
    response = client.put(
        "/api/plugins/alpha/tools/whisper", json={"enabled": True}, headers=stranger
    )
    assert response.status_code == 401


def test_the_settings_page_sends_strangers_to_sign_in(client, signed_in_client):
    response = client.get("/settings")
    assert response.status_code == 302
    assert "/sign-in" in response.headers["Location"]
    page = signed_in_client("alice").get("/settings").get_data(as_text=True)
    assert 'data-api="/api/plugins/settings"' in page
    assert '<meta name="csrf-token"' in page


def test_the_tools_a_message_offers_are_the_user_s_enabled_ones(signed_in_client):
    client = signed_in_client("alice")

    def offered() -> list[tuple[str, str, str]]:
        response = client.get("/api/tools")
        assert response.status_code == 200, response.get_json()
        return [(t["name"], t["plugin"], t["pluginTitle"]) for t in response.get_json()["tools"]]

    assert offered() == [("shout", "alpha", "Alpha"), ("web_fetch", "web_fetch", "Web fetch")]
    client.put("/api/plugins/alpha/tools/whisper", json={"enabled": True})
    client.put("/api/plugins/web_fetch/tools/web_fetch", json={"enabled": False})
    assert [name for name, _, _ in offered()] == ["shout", "whisper"]


def test_each_plugin_block_carries_the_title_its_switches_are_labelled_with(signed_in_client):
    plugins = listed(signed_in_client("alice"))
    assert plugins["web_fetch"]["title"] == "Web fetch"
