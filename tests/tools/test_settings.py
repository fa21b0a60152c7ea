"""Stored options and settings: secrets are never sent back and a blank keeps the stored one."""

from marshmallow import Schema, fields, validate

from tools.schema import json_schema
from tools.settings import mask, merge_save

KEYED = ["brave", "kagi"]


class EngineOptions(Schema):
    engine = fields.String(
        required=True,
        validate=validate.OneOf(["brave", "kagi", "searxng"], labels=["Brave", "Kagi", "SearXNG"]),
        metadata={"title": "Engine"},
    )
    apiKey = fields.String(metadata={"secret": True, "show_when": {"engine": KEYED}})
    baseURL = fields.Url(metadata={"show_when": {"engine": ["searxng"]}})


def test_secrets_are_masked_and_reported_as_set():
    shown, secrets_set = mask(EngineOptions, {"engine": "brave", "apiKey": "sk-1"})
    assert shown == {"engine": "brave"}
    assert secrets_set == {"apiKey": True}
    assert mask(EngineOptions, {"engine": "brave"})[1] == {"apiKey": False}


def test_a_blank_or_missing_secret_keeps_the_stored_value():
    stored = {"engine": "brave", "apiKey": "sk-1"}
    assert merge_save(EngineOptions, stored, {"engine": "brave", "apiKey": ""}) == stored
    assert merge_save(EngineOptions, stored, {"engine": "brave"}) == stored


def test_a_new_secret_replaces_the_stored_one():
    stored = {"engine": "brave", "apiKey": "sk-1"}
    saved = merge_save(EngineOptions, stored, {"engine": "brave", "apiKey": "sk-2"})
    assert saved["apiKey"] == "sk-2"


def test_changing_the_engine_drops_the_stored_key_unless_a_new_one_is_given():
    stored = {"engine": "brave", "apiKey": "sk-brave"}
    assert merge_save(EngineOptions, stored, {"engine": "kagi"}) == {"engine": "kagi"}
    saved = merge_save(EngineOptions, stored, {"engine": "kagi", "apiKey": "sk-kagi"})
    assert saved == {"engine": "kagi", "apiKey": "sk-kagi"}


def test_form_schema_marks_secrets_write_only_and_conditional_fields():
    schema = json_schema(EngineOptions)
    assert schema["properties"]["apiKey"]["writeOnly"] is True
    assert schema["properties"]["apiKey"]["x-show-when"] == {"engine": KEYED}
    assert schema["properties"]["baseURL"] == {
        "type": "string",
        "format": "uri",
        "x-show-when": {"engine": ["searxng"]},
    }
    assert schema["properties"]["engine"]["enum"] == ["brave", "kagi", "searxng"]
    assert schema["properties"]["engine"]["x-enum-labels"] == ["Brave", "Kagi", "SearXNG"]
    assert schema["required"] == ["engine"]
