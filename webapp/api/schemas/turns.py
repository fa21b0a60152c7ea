"""Turns: the body that starts one, and how a turn reads while it runs and once it ended."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from core.turn import continuation
from webapp.api.schemas.times import UtcTime

MAX_CONTENT = 100_000


class GenerationSchema(Schema):
    """Per-turn generation options; ``tools`` present (even empty) names the tools exactly."""

    tools = fields.List(fields.String(), allow_none=True)


class TurnRequest(Schema):
    """The body of ``POST /api/conversations/<id>/turns`` and of ``POST /api/turns``."""

    content = fields.String(
        validate=validate.Length(
            min=1,
            max=MAX_CONTENT,
            error=f"A message must have 1 to {MAX_CONTENT:,} characters. Shorten it, or attach "
            "long text as a file instead.",
        ),
        metadata={"title": "Your message"},
    )
    model = fields.String(
        required=True, validate=validate.Length(min=3, max=300), metadata={"title": "Model"}
    )
    parentMessageId = fields.String(allow_none=True)
    generation = fields.Nested(GenerationSchema, load_default=dict)
    attachments = fields.List(fields.String(), load_default=list)


class TurnSchema(Schema):
    """A turn: its status, reply message, error and token usage."""

    id = fields.String()
    status = fields.String(metadata={"description": "queued, running, or how it ended."})
    conversationId = fields.String(attribute="conversation_id")
    userMessageId = fields.String(attribute="user_message_id")
    assistantMessageId = fields.String(attribute="assistant_message_id", allow_none=True)
    model = fields.String(allow_none=True)
    error = fields.String(allow_none=True)
    usage = fields.Dict(allow_none=True)
    createdAt = UtcTime(attribute="created_at")
    finishedAt = UtcTime(attribute="finished_at", allow_none=True)
    continues = fields.Function(
        continuation.continues,
        metadata={
            "type": "boolean",
            "description": "Whether the turn continues a reply an earlier turn wrote: its "
            "events add to the reply's stored parts.",
        },
    )


QUEUED = ("id", "status", "conversationId", "userMessageId")


class QueuedTurnSchema(TurnSchema):
    """A turn just queued: who it answers, before anything else is known."""

    class Meta:
        fields = QUEUED


class ContinueRequest(Schema):
    """The body of ``POST /api/messages/<message_id>/continue``, which may be left out: the
    reply goes on with the model that wrote it last."""

    model = fields.String(validate=validate.Length(min=3, max=300), metadata={"title": "Model"})


class ContinuingTurnSchema(TurnSchema):
    """A turn just queued to continue a reply: the reply it writes on is known from the start."""

    class Meta:
        fields = (*QUEUED, "assistantMessageId", "continues")


class TurnContinuedSchema(Schema):
    """The answer to a continuation: the turn, and the address of its Server-Sent Events."""

    turn = fields.Nested(ContinuingTurnSchema)
    eventsUrl = fields.String()


class TurnStartedSchema(Schema):
    """The answer to a new turn: the turn, and the address of its Server-Sent Events."""

    turn = fields.Nested(QueuedTurnSchema)
    eventsUrl = fields.String()


class TurnEventSchema(Schema):
    """One Server-Sent Event of a turn, as an ``EventSource`` reads it."""

    id = fields.String(metadata={"description": "Send it back as Last-Event-ID to resume."})
    event = fields.String(
        required=True,
        metadata={
            "description": "text.delta, tool.call, ..., and one ending: turn.completed, "
            "turn.failed or turn.cancelled."
        },
    )
    data = fields.String(required=True, metadata={"description": "The event's JSON object."})
