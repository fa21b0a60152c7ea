"""Conversations over the API: list, create, read (every branch), rename, delete."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request
from flask_login import current_user

from core.extensions import db
from core.models import Conversation, Turn
from core.turn.lifecycle import cancel_turn, open_turns
from webapp import queue
from webapp.api.bodies import json_object, load_object
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.conversations import (
    ConversationBody,
    ConversationDetailSchema,
    ConversationListSchema,
    ConversationSchema,
)
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_conversations", __name__, url_prefix="/api/conversations")


def get_conversation(conversation_id: str) -> Conversation:
    """Return the signed-in user's conversation; 404 for anyone else's, as for a missing one."""
    return owned(db.session.get(Conversation, conversation_id))


def owned(conversation: Conversation | None) -> Conversation:
    """Return a conversation read by id if it is the signed-in user's; 404 otherwise, in the
    words of a missing one."""
    if conversation is None or conversation.owner_id != current_user.id:
        raise ApiError(
            "There is no such conversation among yours: it may have been deleted. Pick one "
            "from the list, or start a new chat.",
            404,
        )
    return conversation


def show_conversation(conversation: Conversation, messages: bool = True) -> dict[str, Any]:
    """Return a conversation; with ``messages``, every message of every branch, oldest first."""
    if not messages:
        return ConversationSchema().dump(conversation)
    # The open turn is read before the messages: SQLite reads each SELECT at its own moment,
    # and a turn ending between two reads must leave the page an open turn to follow (whose
    # events end at once), never a "running" reply with no turn to follow.
    open_turn = db.session.scalar(open_turns(conversation.id))
    detail = {
        "id": conversation.id,
        "title": conversation.title,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "messages": list(conversation.messages),
        "openTurnId": open_turn.id if open_turn else None,
        "model": db.session.scalar(  # the newest turn's: the page picks it again
            db.select(Turn.model)
            .filter_by(conversation_id=conversation.id)
            .order_by(Turn.created_at.desc())
            .limit(1)
        ),
        "failedTurns": db.session.scalars(
            db.select(Turn)
            .filter_by(conversation_id=conversation.id, status="failed")
            .order_by(Turn.created_at)
        ),
    }
    return ConversationDetailSchema().dump(detail)


def read_title(body: dict[str, Any]) -> str:
    """Return the checked title of a create or rename request."""
    return load_object(ConversationBody, body, "conversation")["title"]


@bp.get("")
@api_login_required
@operation(answers={200: ConversationListSchema})
def list_conversations():
    """List the user's conversations, most recently updated first."""
    rows = db.session.scalars(
        db.select(Conversation)
        .filter_by(owner_id=current_user.id)
        .order_by(Conversation.updated_at.desc())
    )
    return jsonify(ConversationListSchema().dump({"conversations": rows}))


@bp.post("")
@api_login_required
@operation(body=ConversationBody, body_required=False, answers={201: ConversationDetailSchema})
def create_conversation():
    """Create an empty conversation; the body, with its title, may be left out."""
    body = json_object() if request.get_data(cache=True).strip() else {}
    conversation = Conversation(owner_id=current_user.id, title=read_title(body))
    db.session.add(conversation)
    db.session.commit()
    return jsonify(show_conversation(conversation)), 201


@bp.get("/<conversation_id>")
@api_login_required
@operation(answers={200: ConversationDetailSchema})
def read_conversation(conversation_id: str):
    """Return a conversation with all its messages."""
    return jsonify(show_conversation(get_conversation(conversation_id)))


@bp.patch("/<conversation_id>")
@api_login_required
@operation(body=ConversationBody, answers={200: ConversationSchema})
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
@operation(answers={204: NO_CONTENT})
def delete_conversation(conversation_id: str):
    """Delete a conversation, cancelling its running turn first."""
    conversation = get_conversation(conversation_id)
    for turn in db.session.scalars(open_turns(conversation.id)).all():
        cancel_turn(turn, revoke=queue.revoke)
    db.session.delete(db.session.get(Conversation, conversation_id))
    db.session.commit()
    return "", 204
