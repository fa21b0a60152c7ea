"""Turns stored straight in the database, for tests of what happens to a turn in a given state
(no model, no worker): one conversation, the user's message, and the turn."""

from __future__ import annotations

from flask import Flask

from core.extensions import db
from core.models import Conversation, Message, Turn
from core.turn.parts import text_part


def stored_turn(
    app: Flask, owner_id: str, status: str, error: str | None = None, with_reply: bool = False
) -> str:
    """Store a turn of a new conversation of ``owner_id`` in ``status`` and return its id;
    ``with_reply`` gives it an empty assistant message (as a running turn has)."""
    with app.app_context():
        conversation = Conversation(owner_id=owner_id, title="Stored turn")
        db.session.add(conversation)
        db.session.flush()
        asked = Message(
            conversation_id=conversation.id, role="user", parts=[text_part("hi")],
            status="completed",
        )  # fmt: skip
        db.session.add(asked)
        db.session.flush()
        reply = None
        if with_reply:
            reply = Message(
                conversation_id=conversation.id, parent_id=asked.id, role="assistant",
                parts=[], status=status,
            )  # fmt: skip
            db.session.add(reply)
            db.session.flush()
        turn = Turn(
            conversation_id=conversation.id, user_message_id=asked.id,
            assistant_message_id=reply.id if reply else None, model="p/m", status=status,
            error=error, step=0,
        )  # fmt: skip
        db.session.add(turn)
        db.session.commit()
        return turn.id
