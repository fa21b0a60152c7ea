"""A turn's event stream, once the turn's own events are gone, still ends with the stored
sentence: a page that follows a failed turn late reads why it failed."""

from __future__ import annotations

from tests.support.turns import stored_turn

WHY = "The worker answering this turn stopped before it finished. Send the message again."


def test_a_failed_turn_whose_stream_expired_ends_with_its_stored_sentence(app, signed_in_client):
    client = signed_in_client()
    turn_id = stored_turn(app, client.user.id, "failed", WHY)
    body = client.get(f"/api/turns/{turn_id}/events").get_data(as_text=True)
    assert body == f'event: turn.failed\ndata: {{"error": "{WHY}"}}\n\n'


def test_a_completed_turn_whose_stream_expired_ends_plainly(app, signed_in_client):
    client = signed_in_client()
    turn_id = stored_turn(app, client.user.id, "completed")
    body = client.get(f"/api/turns/{turn_id}/events").get_data(as_text=True)
    assert body == "event: turn.completed\ndata: {}\n\n"
