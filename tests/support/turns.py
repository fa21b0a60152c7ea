"""Turns stored straight in the database, for tests of what happens to a turn in a given state
(no model, no worker): one conversation, the user's message, and the turn or the reply."""

from __future__ import annotations

from flask import Flask

from core.extensions import db
from core.models import Conversation, Message, Turn
from core.turn.parts import text_part


def new_question(owner_id: str, text: str, title: str) -> tuple[Conversation, Message]:
    """Return a new conversation of ``owner_id`` (added and flushed, in the caller's app context)
    and the user's completed message of ``text`` in it, not yet added to the session."""
    conversation = Conversation(owner_id=owner_id, title=title)
    db.session.add(conversation)
    db.session.flush()
    asked = Message(
        conversation_id=conversation.id, role="user", parts=[text_part(text)], status="completed"
    )
    return conversation, asked


def stored_turn(
    app: Flask, owner_id: str, status: str, error: str | None = None, with_reply: bool = False
) -> str:
    """Store a turn of a new conversation of ``owner_id`` in ``status`` and return its id;
    ``with_reply`` gives it an empty assistant message (as a running turn has)."""
    with app.app_context():
        conversation, asked = new_question(owner_id, "hi", "Stored turn")
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


def stored_conversation(
    app: Flask, owner_id: str, title: str, reply_parts: list, status: str = "completed"
) -> str:
    """Store a conversation of ``owner_id``: a question ("Q") and a reply of ``reply_parts`` in
    ``status``, as a turn ended long ago left them; return the conversation's id."""
    with app.app_context():
        conversation, asked = new_question(owner_id, "Q", title)
        db.session.add(asked)
        db.session.flush()
        db.session.add(
            Message(
                conversation_id=conversation.id,
                parent_id=asked.id,
                role="assistant",
                status=status,
                parts=reply_parts,
            )
        )
        db.session.commit()
        return conversation.id
