"""Continuing a stopped or cut-off reply over the API: its text goes on at the end of the reply."""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from flask_login import current_user

from core.extensions import db
from core.models import Conversation, Message
from core.turn.continuation import continue_reply
from core.turn.lifecycle import TurnRefused
from webapp import queue
from webapp.api.bodies import json_object, load_object
from webapp.api.operations import operation
from webapp.api.schemas.turns import ContinueRequest, TurnContinuedSchema
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_continuations", __name__, url_prefix="/api")


@bp.post("/messages/<message_id>/continue")
@api_login_required
@operation(
    body=ContinueRequest,
    body_required=False,
    answers={202: TurnContinuedSchema},
    errors=(400, 404, 409, 429, 503),
)
def continue_message(message_id: str):
    """Queue a turn that continues a stopped or cut-off reply, the newest of its conversation,
    with no tools and no new message; 202 with the turn and its events URL, 409 for a reply
    that cannot be continued (saying why)."""
    message = db.session.get(Message, message_id)
    conversation = db.session.get(Conversation, message.conversation_id) if message else None
    if conversation is None or conversation.owner_id != current_user.id:
        raise ApiError("There is no such message among yours: it may have been deleted.", 404)
    if message.role != "assistant":
        raise ApiError("Only a reply can be continued; this is your own message.", 409)
    body = json_object() if request.get_data(cache=True).strip() else {}
    model = load_object(ContinueRequest, body, "continuation").get("model")
    try:
        turn = continue_reply(
            conversation, message, model, current_user.roles, send=queue.send_first_step
        )
    except TurnRefused as refused:
        raise ApiError(
            refused.message, refused.status, refused.fields, refused.retry_after
        ) from refused
    answer = {"turn": turn, "eventsUrl": f"/api/turns/{turn.id}/events"}
    return jsonify(TurnContinuedSchema().dump(answer)), 202
