"""Which message a new turn answers on: the conversation's newest by default, the one named, or
none (an explicit null: a new first message); a message elsewhere is a 400, someone else's
conversation a 404. Each is one shape of the POST's query, built once (webapp/api/turns.py)."""

from __future__ import annotations

import pytest

from core.extensions import db
from core.models import Provider
from core.turn.lifecycle import finish_turn


@pytest.fixture
def chat(app, client, make_user, bearer):
    """Post a message of a new user to a conversation of theirs and end its turn; return the
    new message's parent as the conversation shows it."""
    with app.app_context():
        db.session.add(
            Provider(name="local", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}])
        )
        db.session.commit()
    headers = bearer(make_user("carol"))
    created = client.post("/api/conversations", json={}, headers=headers).get_json()
    url = f"/api/conversations/{created['id']}"

    def post(content: str, **parent) -> tuple[str, str | None]:
        body = {"content": content, "model": "local/m", **parent}
        started = client.post(f"{url}/turns", json=body, headers=headers)
        assert started.status_code == 202, started.get_json()
        turn = started.get_json()["turn"]
        with app.app_context():
            finish_turn(turn["id"], "completed")
        messages = client.get(url, headers=headers).get_json()["messages"]
        parents = {m["id"]: m["parentId"] for m in messages}
        return turn["userMessageId"], parents[turn["userMessageId"]]

    post.url, post.headers = url, headers
    return post


def test_a_turn_answers_on_the_newest_the_named_or_no_message(chat):
    first, parent = chat("One")
    assert parent is None
    second, parent = chat("Two")
    assert parent == first  # the newest message, when none is named
    _third, parent = chat("Two, again", parentMessageId=first)
    assert parent == first  # the one named: a new branch beside the second
    _fourth, parent = chat("One, edited", parentMessageId=None)
    assert parent is None  # an explicit null: a new first message
    assert second != first


def test_a_parent_of_another_conversation_is_refused_and_another_user_sees_a_404(
    chat, client, make_user, bearer
):
    first, _ = chat("One")
    other = client.post("/api/conversations", json={}, headers=chat.headers).get_json()["id"]
    refused = client.post(
        f"/api/conversations/{other}/turns",
        json={"content": "Hi", "model": "local/m", "parentMessageId": first},
        headers=chat.headers,
    )
    assert refused.status_code == 400
    assert refused.get_json()["error"]["fields"] == {
        "parentMessageId": ["Not a message of this conversation."]
    }
    stranger = client.post(
        f"{chat.url}/turns",
        json={"content": "Hi", "model": "local/m"},
        headers=bearer(make_user("mallory")),
    )
    assert stranger.status_code == 404


def test_a_user_message_named_without_content_is_answered_again(chat, client):
    """Regenerating: the turn answers the named user message itself, with no new message; the
    POST's query reads only the parent's id, conversation and role, and the message whole only
    for this."""
    first, _ = chat("One")
    chat("Two")
    body = {"model": "local/m", "parentMessageId": first}
    started = client.post(f"{chat.url}/turns", json=body, headers=chat.headers)
    assert started.status_code == 202, started.get_json()
    assert started.get_json()["turn"]["userMessageId"] == first
    messages = client.get(chat.url, headers=chat.headers).get_json()["messages"]
    assert [m["parts"][0]["text"] for m in messages if m["role"] == "user"] == ["One", "Two"]
