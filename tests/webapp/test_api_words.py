"""Errors people read are sentences with the next step, never the API's or marshmallow's words.

The JSON shape stays {"error": {"message", "fields"}}; what changes is the words inside it.
"""

from __future__ import annotations

import pytest
from marshmallow import Schema, fields, validate

from core.extensions import db
from core.models import Message
from core.turn.parts import text_part
from tests.support.models import unanswered_model
from webapp.api.field_errors import sentence, titles_of

PLUGINS = "tests.tools.sample_plugins.alpha,tools.web_search,tools.web_fetch"
OPTIONS = "/api/admin/plugins/web_search/options"


@pytest.fixture
def app(make_app):
    """An app with a sample plugin and the built-in search and fetch."""
    return make_app(LOOKOUT_PLUGINS=PLUGINS)


@pytest.fixture
def alice(signed_in_client):
    return signed_in_client("alice")


@pytest.fixture
def admin(signed_in_client):
    return signed_in_client("root", admin=True)


@pytest.fixture
def model_id(app):
    """A stored provider with one model (no turn is ever run: every request here is refused)."""
    return unanswered_model(app)


def conversation_of(client) -> str:
    response = client.post("/api/conversations", json={})
    assert response.status_code == 201
    return response.get_json()["id"]


def refused(response) -> dict:
    """The error body of a 400."""
    assert response.status_code == 400, response.get_json()
    return response.get_json()["error"]


LONG_OR_EMPTY = (
    "A message must have 1 to 100,000 characters. Shorten it, or attach long text as a file "
    "instead."
)


@pytest.mark.parametrize("content", ["", "x" * 100_001], ids=["empty", "too long"])
def test_a_message_of_the_wrong_length_says_how_long_it_may_be(alice, model_id, content):
    """Regression: the page showed "content: Length must be between 1 and 100000."."""
    url = f"/api/conversations/{conversation_of(alice)}/turns"
    error = refused(alice.post(url, json={"content": content, "model": model_id}))
    assert error == {"message": LONG_OR_EMPTY, "fields": {"content": [LONG_OR_EMPTY]}}


def test_a_removed_model_says_to_pick_another(alice, model_id):
    """Regression: the page showed "Pick one from GET /api/models."."""
    url = f"/api/conversations/{conversation_of(alice)}/turns"
    error = refused(alice.post(url, json={"content": "Hi", "model": "gone/model"}))
    assert error["message"] == (
        "The model gone/model is not installed: an administrator may have removed it. "
        "Pick another model from the list."
    )
    assert error["fields"] == {"model": ["Not installed. Pick another model from the list."]}
    assert "/api/" not in error["message"]


def test_a_model_its_provider_does_not_list_is_not_installed(alice, model_id):
    url = f"/api/conversations/{conversation_of(alice)}/turns"
    error = refused(alice.post(url, json={"content": "Hi", "model": "local/other"}))
    assert error["fields"] == {"model": ["Not installed. Pick another model from the list."]}


def test_a_parent_message_of_another_conversation_is_refused(app, alice, model_id):
    other = conversation_of(alice)
    with app.app_context():
        message = Message(conversation_id=other, role="user", parts=[text_part("Hi")])
        db.session.add(message)
        db.session.commit()
        message_id = message.id
    url = f"/api/conversations/{conversation_of(alice)}/turns"
    body = {"content": "Hi", "model": model_id, "parentMessageId": message_id}
    error = refused(alice.post(url, json=body))
    assert error == {
        "message": "parentMessageId is not a message of this conversation.",
        "fields": {"parentMessageId": ["Not a message of this conversation."]},
    }


def test_a_missing_model_names_the_field_as_people_call_it(alice):
    url = f"/api/conversations/{conversation_of(alice)}/turns"
    error = refused(alice.post(url, json={"content": "Hi"}))
    assert error == {"message": "Model is required.", "fields": {"model": ["Model is required."]}}


def test_options_without_an_engine_ask_for_the_search_engine(admin):
    """Regression: the admin page showed "engine: Missing data for required field."."""
    error = refused(admin.put(OPTIONS, json={}))
    assert error == {
        "message": "Search engine is required.",
        "fields": {"engine": ["Search engine is required."]},
    }
    listed = {p["id"]: p for p in admin.get("/api/admin/plugins").get_json()["plugins"]}
    search = listed["web_search"]
    assert search["reason"] == "Set its options below to turn it on. Search engine is required."
    assert search["fields"] == {"engine": ["Search engine is required."]}


def test_a_bad_option_value_says_what_is_allowed(admin):
    error = refused(admin.put(OPTIONS, json={"engine": "duckduckgo", "maxResults": 50}))
    assert error["message"] == "Results per search must be from 1 to 20."
    error = refused(admin.put(OPTIONS, json={"engine": "altavista"}))
    assert error["message"].startswith("Search engine must be one of: duckduckgo, brave")
    assert error["message"].endswith("Pick one of these.")


def test_a_schema_s_own_sentence_passes_through(admin):
    error = refused(admin.put(OPTIONS, json={"engine": "brave"}))
    assert error == {
        "message": "Brave needs an API key.",
        "fields": {"apiKey": ["Brave needs an API key."]},
    }


def test_a_provider_with_a_bad_address_names_the_field(admin):
    error = refused(admin.post("/api/admin/providers", json={"name": "p", "baseUrl": "nope"}))
    assert error["message"] == "Base URL must be a web address starting with http:// or https://."


class Sample(Schema):
    name = fields.String(required=True, metadata={"title": "Name"})
    size = fields.Integer(validate=validate.Range(min=1), metadata={"title": "Size"})
    note = fields.String(validate=validate.Length(min=2, max=5))


@pytest.mark.parametrize(
    ("key", "message", "expected"),
    [
        ("name", "Missing data for required field.", "Name is required."),
        ("name", "Field may not be null.", "Name cannot be empty."),
        ("size", "Not a valid integer.", "Size must be a whole number."),
        ("size", "Must be greater than or equal to 1.", "Size must be at least 1."),
        ("note", "Length must be between 2 and 5.", "note must be 2 to 5 characters long."),
        ("colour", "Unknown field.", "colour is not a setting Lookout knows: leave it out."),
        ("name", "Names may not contain a slash.", "Names may not contain a slash."),
    ],
)
def test_stock_messages_become_sentences_naming_the_field(key, message, expected):
    assert sentence(key, message, titles_of(Sample)) == expected


def test_an_empty_provider_name_is_called_required_not_too_long(admin):
    """Regression: an empty name was refused as "Name must be at most 100 characters long."."""
    body = {"name": "", "baseUrl": "http://127.0.0.1:9/v1"}
    error = refused(admin.post("/api/admin/providers", json=body))
    assert error["fields"]["name"] == ["Name is required and must be at most 100 characters long."]


def test_a_nested_field_is_named_by_its_row():
    titles = {"models": "Models"}
    assert sentence("models.0.name", "Missing data for required field.", titles) == (
        "Models, row 1, name is required."
    )


@pytest.mark.parametrize("path", ["/api/admin/providers", "/api/admin/providers/test"])
def test_a_key_a_header_cannot_carry_is_refused_in_words(admin, path):
    """Regression: a key with "é" was stored, then every model call failed to encode its
    Authorization header (the connection test answered a 500)."""
    body = {"name": "p", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-caf\u00e9"}
    error = refused(admin.post(path, json=body))
    assert error["fields"]["apiKey"] == [
        "The API key holds 'é', which an HTTP header cannot carry: a key is ASCII letters, "
        "digits and punctuation. Copy it again from the provider's page."
    ]


def test_half_an_emoji_in_a_body_is_read_as_a_replacement_character(alice):
    """Regression: a title holding a lone surrogate (an emoji a client cut in two, sent as
    "\\ud83d") failed the request when it was stored; browsers send such a half as U+FFFD."""
    body = '{"title": "Trip \\ud83d plans \\ud83d\\ude00"}'
    created = alice.post("/api/conversations", data=body, content_type="application/json")
    assert created.status_code == 201, created.get_data(as_text=True)
    shown = alice.get(f"/api/conversations/{created.get_json()['id']}").get_json()
    assert shown["title"] == "Trip \ufffd plans \U0001f600"
