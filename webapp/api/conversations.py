"""Conversations over the API: list, create, read (every branch), rename, delete."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request
from flask_login import current_user

from webapp.api.bodies import json_object
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError
from webapp.extensions import db
from webapp.models import Conversation, Message, Turn
from webapp.turn.lifecycle import cancel_turn, open_turns

bp = Blueprint("api_conversations", __name__, url_prefix="/api/conversations")
MAX_TITLE = 200


def get_conversation(conversation_id: str) -> Conversation:
    """Return the signed-in user's conversation; 404 for anyone else's, as for a missing one."""
    conversation = db.session.get(Conversation, conversation_id)
    if conversation is None or conversation.owner_id != current_user.id:
        raise ApiError("There is no such conversation.", 404)
    return conversation


def show_message(message: Message) -> dict[str, Any]:
    """Return a message in the API's shape."""
    return {
        "id": message.id,
        "parentId": message.parent_id,
        "role": message.role,
        "status": message.status,
        "parts": message.parts,
        "createdAt": message.created_at.isoformat(),
    }


def show_conversation(conversation: Conversation, messages: bool = True) -> dict[str, Any]:
    """Return a conversation; with ``messages``, every message of every branch, oldest first."""
    shown: dict[str, Any] = {
        "id": conversation.id,
        "title": conversation.title,
        "createdAt": conversation.created_at.isoformat(),
        "updatedAt": conversation.updated_at.isoformat(),
    }
    if messages:
        # The open turn is read before the messages: SQLite reads each SELECT at its own moment,
        # and a turn ending between two reads must leave the page an open turn to follow (whose
        # events end at once), never a "running" reply with no turn to follow.
        open_turn = db.session.scalar(open_turns(conversation.id))
        shown["messages"] = [show_message(m) for m in conversation.messages]
        shown["openTurnId"] = open_turn.id if open_turn else None
        shown["model"] = db.session.scalar(  # the newest turn's: the page picks it again
            db.select(Turn.model)
            .filter_by(conversation_id=conversation.id)
            .order_by(Turn.created_at.desc())
            .limit(1)
        )
        failed = db.session.scalars(
            db.select(Turn)
            .filter_by(conversation_id=conversation.id, status="failed")
            .order_by(Turn.created_at)
        )
        shown["failedTurns"] = [
            {
                "id": turn.id,
                "userMessageId": turn.user_message_id,
                "assistantMessageId": turn.assistant_message_id,
                "error": turn.error,
            }
            for turn in failed
        ]
    return shown


def read_title(body: Any) -> str:
    """Return the title of a create or rename request, checked."""
    title = body.get("title", "") if isinstance(body, dict) else None
    if not isinstance(title, str):
        raise ApiError("The title must be text.", 400, {"title": ["Must be a string."]})
    title = " ".join(title.split())
    if len(title) > MAX_TITLE:
        raise ApiError("The title is too long.", 400, {"title": [f"Use at most {MAX_TITLE}."]})
    return title


@bp.get("")
@api_login_required
def list_conversations():
    """List the user's conversations, most recently updated first."""
    rows = db.session.scalars(
        db.select(Conversation)
        .filter_by(owner_id=current_user.id)
        .order_by(Conversation.updated_at.desc())
    )
    return jsonify({"conversations": [show_conversation(c, messages=False) for c in rows]})


@bp.post("")
@api_login_required
def create_conversation():
    """Create an empty conversation."""
    conversation = Conversation(
        owner_id=current_user.id, title=read_title(request.get_json(silent=True) or {})
    )
    db.session.add(conversation)
    db.session.commit()
    return jsonify(show_conversation(conversation)), 201


@bp.get("/<conversation_id>")
@api_login_required
def read_conversation(conversation_id: str):
    """Return a conversation with all its messages."""
    return jsonify(show_conversation(get_conversation(conversation_id)))


@bp.patch("/<conversation_id>")
@api_login_required
def rename_conversation(conversation_id: str):
    """Change a conversation's title."""
    conversation = get_conversation(conversation_id)
    hint = 'Send the new title as {"title": ...}.'
    body = json_object(hint)
    if "title" not in body:
        raise ApiError(hint, 400)
    conversation.title = read_title(body)
    db.session.commit()
    return jsonify(show_conversation(conversation, messages=False))


@bp.delete("/<conversation_id>")
@api_login_required
def delete_conversation(conversation_id: str):
    """Delete a conversation, cancelling its running turn first."""
    conversation = get_conversation(conversation_id)
    for turn in db.session.scalars(open_turns(conversation.id)).all():
        cancel_turn(turn)
    db.session.delete(db.session.get(Conversation, conversation_id))
    db.session.commit()
    return "", 204
