"""Conversations over the API without a worker: renaming, and the sentences bad bodies get."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.extensions import db
from core.models import Message, Turn

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


def test_a_deleted_conversation_s_link_says_what_to_do_instead(client, conversation):
    """A bookmarked chat that was deleted opened on "There is no such conversation." alone."""
    url, headers = conversation
    assert client.delete(url, headers=headers).status_code == 204
    answer = client.get(url, headers=headers)
    assert answer.status_code == 404
    assert answer.get_json()["error"]["message"] == (
        "There is no such conversation among yours: it may have been deleted. Pick one from "
        "the list, or start a new chat."
    )


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


@pytest.fixture
def first_message(app, client, make_user, bearer):
    """Headers of a new user and a stored model id, for starting a first message."""
    from core.models import Provider

    with app.app_context():
        db.session.add(
            Provider(name="local", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}])
        )
        db.session.commit()
    return bearer(make_user("bob")), "local/m"


def conversations_of(client, headers) -> list[dict]:
    return client.get("/api/conversations", headers=headers).get_json()["conversations"]


@pytest.mark.parametrize(
    "body",
    [
        {"content": "x" * 100_001, "model": "local/m"},
        {"content": "Hi", "model": "removed/model"},
        {"content": "Hi", "model": "local/m", "attachments": ["no-such-upload"]},
        {"content": "Hi", "model": "local/m", "parentMessageId": "no-such-message"},
        {"model": "local/m"},
    ],
    ids=["too long", "removed model", "unknown attachment", "unknown parent", "no content"],
)
def test_a_refused_first_message_leaves_no_conversation_behind(client, first_message, body):
    """Regression: a first message the server refused (too long, a removed model) left an empty
    "Untitled conversation" in the list."""
    headers, _model = first_message
    refused = client.post("/api/turns", json=body, headers=headers)
    assert refused.status_code == 400, refused.get_json()
    assert refused.get_json()["error"]["message"]
    assert conversations_of(client, headers) == []


def test_a_first_message_starts_its_conversation_and_turn_together(client, first_message):
    headers, model = first_message
    started = client.post(
        "/api/turns",
        json={"content": "  Where are the lighthouses?  ", "model": model},
        headers=headers,
    )
    assert started.status_code == 202, started.get_json()
    turn = started.get_json()["turn"]
    assert started.get_json()["eventsUrl"] == f"/api/turns/{turn['id']}/events"
    listed = conversations_of(client, headers)
    assert [c["id"] for c in listed] == [turn["conversationId"]]
    assert listed[0]["title"] == "Where are the lighthouses?"
    shown = client.get(f"/api/conversations/{turn['conversationId']}", headers=headers).get_json()
    assert [m["id"] for m in shown["messages"]] == [turn["userMessageId"]]
    assert shown["openTurnId"] == turn["id"]


def test_a_first_message_names_its_conversation_and_a_named_one_keeps_its_name(
    client, first_message
):
    headers, model = first_message
    untitled, renamed = (
        client.post("/api/conversations", json={}, headers=headers).get_json()["id"]
        for _ in range(2)
    )
    client.patch(f"/api/conversations/{renamed}", json={"title": "Kept"}, headers=headers)
    for conversation_id in (untitled, renamed):
        started = client.post(
            f"/api/conversations/{conversation_id}/turns",
            json={"content": "Which  lighthouse is oldest?", "model": model},
            headers=headers,
        )
        assert started.status_code == 202, started.get_json()
        turn = started.get_json()["turn"]
        shown = client.get(f"/api/conversations/{conversation_id}", headers=headers).get_json()
        assert [m["id"] for m in shown["messages"]] == [turn["userMessageId"]]
        assert shown["openTurnId"] == turn["id"]
    titles = {c["id"]: c["title"] for c in conversations_of(client, headers)}
    assert titles == {untitled: "Which lighthouse is oldest?", renamed: "Kept"}
