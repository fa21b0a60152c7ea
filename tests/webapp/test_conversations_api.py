"""Conversations over the API without a worker: renaming, and the sentences bad bodies get."""

from __future__ import annotations

import pytest

HINT = 'Send the new title as {"title": ...}.'


@pytest.fixture
def conversation(client, make_user, bearer):
    """A new conversation of a new user: (its URL, the user's headers)."""
    headers = bearer(make_user("alice"))
    created = client.post("/api/conversations", json={}, headers=headers)
    assert created.status_code == 201, created.get_json()
    return f"/api/conversations/{created.get_json()['id']}", headers


def test_a_conversation_is_renamed(client, conversation):
    url, headers = conversation
    renamed = client.patch(url, json={"title": "  Lighthouses  "}, headers=headers)
    assert renamed.status_code == 200, renamed.get_json()
    assert client.get(url, headers=headers).get_json()["title"] == "Lighthouses"


@pytest.mark.parametrize("body", [["title"], {"name": "x"}, "title"], ids=repr)
def test_a_rename_without_a_title_object_is_refused_and_changes_nothing(client, conversation, body):
    url, headers = conversation
    refused = client.patch(url, json=body, headers=headers)
    assert refused.status_code == 400
    assert refused.get_json()["error"]["message"] == HINT
    assert client.get(url, headers=headers).get_json()["title"] in (None, "")
