"""Conversations over the API without a worker: renaming, and the sentences bad bodies get."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from webapp.extensions import db
from webapp.models import Message, Turn

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


def test_a_conversation_names_the_model_of_its_newest_turn(app, client, conversation):
    """The page selects this model when the conversation is opened again."""
    url, headers = conversation
    assert client.get(url, headers=headers).get_json()["model"] is None
    conversation_id = url.rsplit("/", 1)[1]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with app.app_context():
        question = Message(
            conversation_id=conversation_id, role="user", parts=[], status="completed"
        )
        db.session.add(question)
        db.session.flush()
        for minutes, model in [(0, "old/first"), (5, "new/second")]:
            db.session.add(
                Turn(
                    conversation_id=conversation_id,
                    user_message_id=question.id,
                    model=model,
                    status="completed",
                    created_at=start + timedelta(minutes=minutes),
                )
            )
        db.session.commit()
    assert client.get(url, headers=headers).get_json()["model"] == "new/second"
