"""A turn's event stream, once the turn's own events are gone, still ends with the stored
sentence: a page that follows a failed turn late reads why it failed."""

from __future__ import annotations

from webapp.extensions import db
from webapp.models import Conversation, Message, Turn
from webapp.turn.parts import text_part

WHY = "The worker answering this turn stopped before it finished. Send the message again."


def ended_turn(app, owner_id: str, status: str, error: str | None) -> str:
    """Store a turn that ended with ``status`` and ``error`` and has no event stream."""
    with app.app_context():
        conversation = Conversation(owner_id=owner_id, title="Late")
        db.session.add(conversation)
        db.session.flush()
        asked = Message(
            conversation_id=conversation.id, role="user", parts=[text_part("hi")],
            status="completed",
        )  # fmt: skip
        db.session.add(asked)
        db.session.flush()
        turn = Turn(
            conversation_id=conversation.id, user_message_id=asked.id, model="p/m",
            status=status, error=error,
        )  # fmt: skip
        db.session.add(turn)
        db.session.commit()
        return turn.id


def test_a_failed_turn_whose_stream_expired_ends_with_its_stored_sentence(app, signed_in_client):
    client = signed_in_client()
    turn_id = ended_turn(app, client.user.id, "failed", WHY)
    body = client.get(f"/api/turns/{turn_id}/events").get_data(as_text=True)
    assert body == f'event: turn.failed\ndata: {{"error": "{WHY}"}}\n\n'


def test_a_completed_turn_whose_stream_expired_ends_plainly(app, signed_in_client):
    client = signed_in_client()
    turn_id = ended_turn(app, client.user.id, "completed", None)
    body = client.get(f"/api/turns/{turn_id}/events").get_data(as_text=True)
    assert body == "event: turn.completed\ndata: {}\n\n"
