"""Provider keys and plugin options and settings are stored encrypted, and keys can rotate."""

from __future__ import annotations

import json
import logging

import flask_migrate
import pytest
from sqlalchemy import text

from core.extensions import db
from core.models import PluginOptions, Provider, UserPluginSettings

PLUGINS = "tests.tools.sample_plugins.alpha,tools.web_search"
KEY = "sk-very-secret-provider-key"


@pytest.fixture
def app(make_app):
    return make_app(LOOKOUT_PLUGINS=PLUGINS)


def raw(app, sql: str) -> list:
    """Return the rows of a query as the database holds them, below the models."""
    with app.app_context():
        return [tuple(row) for row in db.session.execute(text(sql))]


def add_provider(app, key: str = KEY) -> str:
    with app.app_context():
        provider = Provider(name="openai", base_url="https://api.example/v1", api_key=key)
        db.session.add(provider)
        db.session.commit()
        return provider.id


def stored_key(app, provider_id: str) -> str | None:
    with app.app_context():
        return db.session.get(Provider, provider_id).api_key


def test_a_providers_key_is_stored_encrypted_and_read_back_in_clear(app, signed_in_client):
    admin = signed_in_client("root", admin=True)
    created = admin.post(
        "/api/admin/providers",
        json={"name": "openai", "baseUrl": "https://api.example/v1", "apiKey": KEY, "models": []},
    )
    assert created.status_code == 201, created.get_json()
    [(stored,)] = raw(app, "SELECT api_key FROM providers")
    assert stored.startswith("enc:v1:") and KEY not in stored
    assert stored_key(app, created.get_json()["id"]) == KEY
    assert created.get_json()["keySet"] is True


def test_plugin_options_and_user_settings_are_stored_encrypted(app, signed_in_client):
    admin = signed_in_client("root", admin=True)
    saved = admin.put(
        "/api/admin/plugins/web_search/options",
        json={"engine": "brave", "apiKey": "brave-secret-key"},
    )
    assert saved.status_code == 200, saved.get_json()
    alice = signed_in_client("alice")
    settings = alice.put("/api/plugins/alpha/settings", json={"greeting": "yo", "token": "s3cr3t"})
    assert settings.status_code == 200, settings.get_json()
    stored = raw(app, "SELECT options FROM plugin_options") + raw(
        app, "SELECT settings FROM user_plugin_settings"
    )
    assert len(stored) == 2
    for (value,) in stored:
        assert "brave" not in value and "s3cr3t" not in value and "enc:v1:" in value
    with app.app_context():
        assert db.session.get(PluginOptions, "web_search").options["apiKey"] == "brave-secret-key"
        row = db.session.get(UserPluginSettings, (alice.user.id, "alpha"))
        assert row.settings == {"greeting": "yo", "token": "s3cr3t"}


def test_a_key_rotates_by_listing_the_new_one_first(make_app):
    old = make_app(SECRETS_KEY="old passphrase")
    provider_id = add_provider(old)
    url = old.config["DATABASE_URL"]
    both = make_app(DATABASE_URL=url, SECRETS_KEY="new passphrase, old passphrase")
    assert stored_key(both, provider_id) == KEY
    with both.app_context():  # re-saving encrypts under the first key
        db.session.get(Provider, provider_id).api_key = "sk-rotated"
        db.session.commit()
    assert stored_key(make_app(DATABASE_URL=url, SECRETS_KEY="new passphrase"), provider_id) == (
        "sk-rotated"
    )


def test_a_value_no_key_opens_reads_as_missing_and_says_why(make_app, caplog):
    first = make_app(SECRETS_KEY="first")
    provider_id = add_provider(first)
    with first.app_context():
        db.session.add(PluginOptions(plugin_id="web_search", options={"engine": "duckduckgo"}))
        db.session.commit()
    other = make_app(DATABASE_URL=first.config["DATABASE_URL"], SECRETS_KEY="another")
    with caplog.at_level(logging.WARNING, logger="lookout.secrets"):
        assert stored_key(other, provider_id) is None
        with other.app_context():
            assert db.session.get(PluginOptions, "web_search").options == {}
    assert "could not be decrypted" in caplog.text
    assert "SECRETS_KEY" in caplog.text


def back_to_0002_with_a_plain_key() -> None:
    """Downgrade to the schema before encryption and store provider p1 with KEY in clear."""
    flask_migrate.downgrade(revision="0002")
    db.session.execute(
        text(
            "INSERT INTO providers (id, name, kind, base_url, api_key, models) "
            "VALUES ('p1', 'old', 'openai-compatible', 'https://x/v1', :key, '[]')"
        ),
        {"key": KEY},
    )


def test_upgrading_encrypts_what_was_stored_in_clear_and_downgrading_restores_it(app):
    with app.app_context():
        back_to_0002_with_a_plain_key()
        db.session.execute(
            text(
                "INSERT INTO plugin_options (plugin_id, options, updated_at) VALUES "
                "('web_search', :options, CURRENT_TIMESTAMP)"
            ),  # fmt: skip
            {"options": json.dumps({"engine": "brave", "apiKey": "brave-secret-key"})},
        )
        db.session.commit()
        flask_migrate.upgrade()
    [(key,)] = raw(app, "SELECT api_key FROM providers")
    [(options,)] = raw(app, "SELECT options FROM plugin_options")
    assert key.startswith("enc:v1:") and "brave-secret-key" not in options
    assert stored_key(app, "p1") == KEY
    with app.app_context():
        assert db.session.get(PluginOptions, "web_search").options["apiKey"] == "brave-secret-key"
        db.session.remove()
        flask_migrate.downgrade(revision="0002")
    assert raw(app, "SELECT api_key FROM providers") == [(KEY,)]
    [(options,)] = raw(app, "SELECT options FROM plugin_options")
    assert json.loads(options) == {"engine": "brave", "apiKey": "brave-secret-key"}


def test_upgrading_refuses_to_encrypt_under_a_key_made_for_that_command(app, caplog):
    with app.app_context():
        back_to_0002_with_a_plain_key()
        db.session.commit()
        app.config["SECRET_KEY_MADE_NOW"] = True
        with pytest.raises(SystemExit):  # flask db upgrade prints the reason and exits 1
            flask_migrate.upgrade()
        db.session.remove()
    assert "Run the upgrade with the app's SECRET_KEY (or SECRETS_KEY) set." in caplog.text
    assert raw(app, "SELECT api_key FROM providers") == [(KEY,)]
    app.config["SECRET_KEY_MADE_NOW"] = False
    with app.app_context():
        flask_migrate.upgrade()
    assert stored_key(app, "p1") == KEY
