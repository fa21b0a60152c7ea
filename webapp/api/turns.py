"""Turns over the API: start one (queued for a worker), read it, cancel it, stream its events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

import redis
from flask import Blueprint, Response, current_app, jsonify, request
from flask_login import current_user
from sqlalchemy import Select, bindparam, sql

from core import metrics
from core.extensions import db
from core.limits import allowance, own_value
from core.models import Conversation, Message, Turn
from core.models.providers import Provider, split_model_id
from core.streams import PROCESS_STREAMS, make_stream, open_stream
from core.turn import lifecycle, statements
from core.turn.events import STREAM_CLOSED, TERMINAL_EVENTS, ending_event
from core.turn.lifecycle import OPEN_STATUSES, TurnRefused, cancel_turn
from core.turn.parts import text_part
from core.turn.state import turn_state
from webapp import queue
from webapp.api.bodies import load_json
from webapp.api.conversations import get_conversation, owned
from webapp.api.operations import EVENT_STREAM, operation
from webapp.api.schemas.turns import (
    TurnEventSchema,
    TurnRequest,
    TurnSchema,
    TurnStartedSchema,
)
from webapp.api.uploads import attachment_parts
from webapp.auth.guards import api_login_required
from webapp.errors import ApiError
from webapp.stream_hub import Follower, event_frame, find_hub, parse_id

bp = Blueprint("api_turns", __name__, url_prefix="/api")
KEEPALIVE_MS = 15000
STREAMS_FULL_RETRY_SECONDS = 10
# Made once: a schema instance built per POST (its fields deep-copied, its nested schema made
# again) cost about as much as the dump itself. Dumping keeps no state on the instance.
STARTED = TurnStartedSchema()
EVENT_PARAMETERS = (
    {
        "name": "Last-Event-ID",
        "in": "header",
        "required": False,
        "schema": {"type": "string"},
        "description": "Resume after this event (browsers send it when they reconnect).",
    },
    {
        "name": "after",
        "in": "query",
        "required": False,
        "schema": {"type": "string"},
        "description": "The same as Last-Event-ID, for clients that cannot set headers.",
    },
)


def read_turn_request() -> dict[str, Any]:
    """Return the checked body of a new turn; 400 with per-field messages otherwise."""
    data = load_json(TurnRequest, "turn")
    if "tools" in data["generation"] and data["generation"]["tools"] is None:
        del data["generation"]["tools"]  # null means "not given": the user's enabled tools
    return data


class Parent(NamedTuple):
    """The message a new one answers or continues from: what a start needs of it. Its parts
    are not read: the newest message is most often the previous reply, whose parts and
    grounding (its text, sources and tool calls) a start decoded from JSON for nothing."""

    id: str
    conversation_id: str
    role: str


PARENT_COLUMNS = (
    Message.id.label("parent_id"),
    Message.conversation_id.label("parent_conversation_id"),
    Message.role.label("parent_role"),
)


@cache
def _model_and_parent(shape: str) -> Select:
    """The query of a conversation (``conversation``), its provider's (``provider``) list of
    models and the message to continue from (its id, conversation and role: ``Parent``): the
    one named (``parent``) when ``shape`` is "named", the conversation's newest for "newest",
    none for "none". Built once for each, where building it cost a POST about as much as
    running it."""
    conversation = bindparam("conversation")
    if shape == "named":
        on = Message.id == bindparam("parent")
    elif shape == "newest":
        newest = (
            db.select(Message.id)
            .where(Message.conversation_id == conversation)
            .order_by(Message.created_at.desc())
            .limit(1)
            .scalar_subquery()
        )
        on = Message.id == newest
    else:
        on = sql.false()
    return (
        db.select(Conversation, Provider.models, *PARENT_COLUMNS)
        .select_from(Conversation)
        .outerjoin(Provider, Provider.name == bindparam("provider"))
        .outerjoin(Message, on)
        .where(Conversation.id == conversation)
    )


def read_model_and_parent(
    conversation: Conversation | str, data: dict[str, Any]
) -> tuple[Conversation, bool, Parent | None]:
    """Return the conversation (read here, the signed-in user's, when given its id: 404
    otherwise), whether the model asked for is installed, and the message to continue from:
    the one named, None for an explicit null (a new first message, as when editing the first
    one), or the newest of the conversation. One query reads them all: the conversation, the
    provider's list of models (never its key, which would be decrypted for nothing) and the
    message."""
    conversation_id = conversation if isinstance(conversation, str) else conversation.id
    try:
        provider_name, model_name = split_model_id(data["model"])
    except ValueError:
        if isinstance(conversation, str):
            conversation = get_conversation(conversation)
        return conversation, False, None
    values = {"conversation": conversation_id, "provider": provider_name}
    if data.get("parentMessageId") is not None:
        shape, values["parent"] = "named", data["parentMessageId"]
    else:
        shape = "newest" if "parentMessageId" not in data else "none"
    found = db.session.execute(_model_and_parent(shape), values).first()
    if isinstance(conversation, str):
        conversation = owned(found.Conversation if found is not None else None)
    models = found.models if found is not None else None
    if not any(m.get("name") == model_name for m in models or []):
        return conversation, False, None
    parent = None if found.parent_id is None else Parent(*found[2:])
    if data.get("parentMessageId") is not None and (
        parent is None or parent.conversation_id != conversation.id
    ):
        raise ApiError(
            "parentMessageId is not a message of this conversation.",
            400,
            {"parentMessageId": ["Not a message of this conversation."]},
        )
    return conversation, True, parent


@bp.post("/conversations/<conversation_id>/turns")
@api_login_required
@operation(body=TurnRequest, answers={202: TurnStartedSchema}, errors=(409, 429, 503))
def post_turn(conversation_id: str):
    """Store the user's message at once and queue the turn; answer 202 with its events URL."""
    try:
        data = read_turn_request()
    except ApiError:
        get_conversation(conversation_id)  # someone else's conversation is a 404 first
        raise
    return start_from_request(conversation_id, data)


@bp.post("/turns")
@api_login_required
@operation(body=TurnRequest, answers={202: TurnStartedSchema}, errors=(409, 429, 503))
def start_conversation():
    """Start a new conversation with its first message; 202 as for any turn. A message the
    server refuses creates nothing (no empty conversation is left behind)."""
    data = read_turn_request()
    # Inserted with its title, rather than updated with it later; committed only once all
    # checks pass.
    conversation = Conversation(owner_id=current_user.id, title=title_of(data))
    db.session.add(conversation)
    db.session.flush()
    return start_from_request(conversation, data)


def title_of(data: dict[str, Any]) -> str:
    """Return the title a conversation takes from its first message (blank without content)."""
    return " ".join(data.get("content", "").split())[:60]


def start_from_request(conversation: Conversation | str, data: dict[str, Any]):
    """Check the request (for a conversation, or its id: read here, 404 unless the user's),
    then start the turn; 202 with the turn and its events URL."""
    conversation, installed, parent = read_model_and_parent(conversation, data)
    if not installed:
        raise ApiError(
            f"The model {data['model']} is not installed: an administrator may have removed it. "
            "Pick another model from the list.",
            400,
            {"model": ["Not installed. Pick another model from the list."]},
        )
    if "content" in data:
        user_message = Message(
            conversation_id=conversation.id,
            parent_id=parent.id if parent else None,
            role="user",
            parts=[text_part(data["content"])] + attachment_parts(data["attachments"]),
            status="completed",
        )
        title = title_of(data) if not conversation.title else None
    elif parent is not None and parent.role == "user" and data.get("parentMessageId"):
        # Regenerate: answer this message again on a new branch.
        user_message, title = db.session.get(Message, parent.id), None
    else:
        raise ApiError(
            "Send content, or parentMessageId naming a user message to answer it again.",
            400,
            {"content": ["Required unless regenerating a user message."]},
        )
    try:
        turn = lifecycle.start_turn(
            conversation,
            user_message,
            data["model"],
            data["generation"],
            current_user.roles,
            send=queue.send_first_step,
            title=title,
        )
    except TurnRefused as refused:
        raise ApiError(
            refused.message, refused.status, refused.fields, refused.retry_after
        ) from refused
    return (
        jsonify(STARTED.dump({"turn": turn, "eventsUrl": f"/api/turns/{turn.id}/events"})),
        202,
    )


def get_turn(turn_id: str) -> Turn:
    """Return a turn of the signed-in user; 404 for anyone else's, in the words of a missing one."""
    turn = db.session.get(Turn, turn_id)
    conversation = db.session.get(Conversation, turn.conversation_id) if turn else None
    if conversation is None or conversation.owner_id != current_user.id:
        raise ApiError("There is no such turn.", 404)
    return turn


@cache
def _owner_and_stream_limit() -> Select:
    """The query of a turn's (``turn``) owner, status and error and the user's (``user``) own
    stream limit: built once, where building it cost a stream about as much as running it."""
    return (
        db.select(
            Conversation.owner_id,
            own_value(bindparam("user"), "eventStreams"),
            Turn.status,
            Turn.error,
        )
        .join(Turn, Turn.conversation_id == Conversation.id)
        .where(Turn.id == bindparam("turn"))
    )


def get_stream_allowance(turn_id: str) -> tuple[int, tuple[str, str | None] | None]:
    """Return how many event streams the signed-in user may have open, read in the query that
    finds the turn theirs, and the turn's ending (status, error) as that query read it, None
    while it is open; 404 for anyone else's turn, as ``get_turn`` says."""
    values = {"user": current_user.id, "turn": turn_id}
    # Columns, no ORM object: on the session's connection, without the session's own execute.
    row = statements.run(_owner_and_stream_limit(), values).first()
    if row is None or row[0] != current_user.id:
        raise ApiError("There is no such turn.", 404)
    ending = None if row.status in OPEN_STATUSES else (row.status, row.error)
    return allowance("eventStreams", row[1]), ending


@bp.get("/turns/<turn_id>")
@api_login_required
@operation(answers={200: TurnSchema})
def read_turn(turn_id: str):
    """Return a turn with its status, reply message, error and token usage."""
    return jsonify(TurnSchema().dump(get_turn(turn_id)))


@bp.post("/turns/<turn_id>/cancel")
@api_login_required
@operation(answers={200: TurnSchema}, errors=(409,))
def cancel(turn_id: str):
    """Cancel a queued or running turn; 409 when it has already ended."""
    turn = get_turn(turn_id)
    if turn.status not in OPEN_STATUSES or not cancel_turn(turn, revoke=queue.revoke):
        db.session.refresh(turn)
        raise ApiError(
            f"This turn has already ended ({turn.status}), so there is nothing to cancel.", 409
        )
    db.session.refresh(turn)
    return jsonify(TurnSchema().dump(turn))


@bp.get("/turns/<turn_id>/events")
@api_login_required
@operation(answers={200: (EVENT_STREAM, TurnEventSchema)}, parameters=EVENT_PARAMETERS)
def stream_events(turn_id: str):
    """Stream the turn's events as Server-Sent Events, resuming after ``Last-Event-ID``.

    The stream counts against the user's ``QUOTA_EVENT_STREAMS`` while it is served: past it,
    the user's oldest stream gets ``stream.closed`` and ends (core/streams.py).
    """
    limit, ending = get_stream_allowance(turn_id)
    after = request.headers.get("Last-Event-ID") or request.args.get("after") or "0"
    app = current_app._get_current_object()
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if PROCESS_STREAMS.full(app.config["EVENT_STREAMS_PER_PROCESS"]):
        raise ApiError(
            "This server is following as many event streams as it can; the page tries again "
            "by itself, or try again in a few seconds.",
            503,
            retry_after=STREAMS_FULL_RETRY_SECONDS,
        )
    hub = find_hub(request.environ)
    position = parse_id(after)
    if hub is not None and position is not None:  # the hub counts it open as it takes it
        stream = make_stream(current_user.id, limit, hub.control)
        body = hub.hand_off(request.environ, Follower(turn_id, position, stream, ending))
        return Response(body, mimetype=EVENT_STREAM, headers=headers)
    try:
        stream = open_stream(current_user.id, limit)
    except redis.RedisError:
        stream = None  # Redis restarting: the stream ends at once and the page reconnects
    state = turn_state(turn_id)

    def ended() -> tuple[str, str | None] | None:
        """The turn's stored ending (status, error), None while it is open."""
        with app.app_context():
            row = db.session.execute(
                db.select(Turn.status, Turn.error).filter_by(id=turn_id)
            ).first()
            return None if row is None or row.status in OPEN_STATUSES else tuple(row)

    def generate() -> Iterator[str]:
        PROCESS_STREAMS.take()
        try:
            with metrics.event_stream_open():
                yield from follow()
        finally:
            PROCESS_STREAMS.release()
            if stream is not None:
                try:
                    stream.close()
                except redis.RedisError:
                    pass  # it stops counting when its alive key expires

    def follow() -> Iterator[str]:
        last, block = after, None  # the first read does not wait, so an ended turn ends at once
        while stream is not None:
            try:
                events = state.read(after=last, block_ms=block, control=stream.control)
            except redis.RedisError:
                return  # Redis restarting: the page reconnects and resumes after ``last``
            block = KEEPALIVE_MS
            for entry_id, name, data in events:
                if name == STREAM_CLOSED:  # the user's newest stream took this one's place
                    yield event_frame(None, name, json.dumps(data))
                    return
                last = entry_id
                yield event_frame(entry_id, name, json.dumps(data))
                if name in TERMINAL_EVENTS:
                    return
            if not events:
                ending = ended()
                if ending is not None:  # ended, and its stream expired (or lost its end)
                    status, error = ending
                    data = json.dumps({"error": error} if error else {})
                    yield event_frame(None, ending_event(status), data)
                    return
                yield ": keep-alive\n\n"
                stream.beat()

    return Response(generate(), mimetype="text/event-stream", headers=headers)
