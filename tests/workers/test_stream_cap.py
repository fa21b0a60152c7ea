"""Event streams one user may have open: a new one past the cap is served, and the user's
oldest gets a last event saying why and ends (a browser's EventSource cannot read a 429)."""

from __future__ import annotations

import json

from core.extensions import db
from core.limits import set_overrides
from core.quotas import remaining
from tests.support.fake_model import Reply


def open_events(chat, turn_id: str):
    """Open the turn's event stream and return the response once the server serves it."""
    response = chat.call("GET", f"/api/turns/{turn_id}/events", stream=True, timeout=30)
    assert response.status_code == 200, response.text
    lines = response.iter_lines(decode_unicode=True)
    assert next(lines) is not None  # its first line: the stream is served and counted
    return response, lines


def test_a_stream_past_the_cap_closes_the_users_oldest_with_a_last_event(
    chat, chat_app, model_ids, fake_model
):
    with chat_app.app_context():
        set_overrides(chat.user_id, {"eventStreams": 2})
        db.session.commit()
    fake_model.default = Reply.hang()
    turn_id = chat.start(chat.new_conversation(), "Hi", model_ids[0])["turn"]["id"]
    oldest, oldest_lines = open_events(chat, turn_id)
    middle, _ = open_events(chat, turn_id)

    newest, newest_lines = open_events(chat, turn_id)

    rest = list(oldest_lines)  # the oldest stream ends
    ending = [line for line in rest if line.startswith(("event:", "data:"))][-2:]
    assert ending[0] == "event: stream.closed"
    assert json.loads(ending[1][len("data: ") :])["message"] == (
        "You have 2 pages or programs following answers, the most one person may have, so "
        "this one stopped for the newest. It follows again when you come back to it."
    )
    with chat_app.app_context():
        assert {r["limit"]: r for r in remaining(chat.user_id)}["eventStreams"]["used"] == 2
    chat.call("POST", f"/api/turns/{turn_id}/cancel")
    assert "event: turn.cancelled" in list(newest_lines)
    for response in (oldest, middle, newest):
        response.close()
