"""Conversations: the body that creates or renames one, and how they and their messages read."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, pre_load, validate

from webapp.api.schemas.parts import PartSchema
from webapp.api.schemas.times import UtcTime

MAX_TITLE = 200


class ConversationBody(Schema):
    """The body of creating a conversation (everything optional) or renaming one."""

    title = fields.String(
        load_default="",
        validate=validate.Length(max=MAX_TITLE),
        metadata={"title": "Title", "description": "Runs of spaces become one space."},
    )

    @pre_load
    def squeeze_title(self, data: Any, **_: Any) -> Any:
        """A title is one line: runs of white space (line ends too) become one space."""
        if isinstance(data, dict) and isinstance(data.get("title"), str):
            return {**data, "title": " ".join(data["title"].split())}
        return data


class GroundingSchema(Schema):
    """How an ended reply used the web."""

    summary = fields.String(
        metadata={
            "description": 'In words: "Searched 2 times, read 3 pages", "Search failed: <the '
            'failed call\'s error>" or "Answered without the web".'
        }
    )
    searches = fields.Integer(metadata={"description": "Searches that gave a result."})
    reads = fields.Integer(metadata={"description": "Pages or files read."})
    failed = fields.Integer(metadata={"description": "Searches and reads that failed."})


class MessageSchema(Schema):
    """One message of a conversation; ``parts`` are the turn parts (text, tool calls, ...)."""

    id = fields.String()
    parentId = fields.String(attribute="parent_id", allow_none=True)
    role = fields.String()
    status = fields.String()
    parts = fields.List(fields.Nested(PartSchema))
    grounding = fields.Nested(
        GroundingSchema,
        allow_none=True,
        metadata={
            "description": "How the reply used the web; null for a user message, or a "
            "reply still being written or stopped before it searched or read."
        },
    )
    createdAt = UtcTime(attribute="created_at")


class FailedTurnSchema(Schema):
    """A turn of the conversation that failed, with the sentence saying why."""

    id = fields.String()
    userMessageId = fields.String(attribute="user_message_id", allow_none=True)
    assistantMessageId = fields.String(attribute="assistant_message_id", allow_none=True)
    error = fields.String(allow_none=True)


class ConversationSchema(Schema):
    """A conversation as listed: no messages."""

    id = fields.String()
    title = fields.String(allow_none=True)
    createdAt = UtcTime(attribute="created_at")
    updatedAt = UtcTime(attribute="updated_at")


class ConversationDetailSchema(ConversationSchema):
    """A conversation with every message of every branch (oldest first) and its open turn."""

    messages = fields.List(fields.Nested(MessageSchema))
    openTurnId = fields.String(allow_none=True)
    model = fields.String(allow_none=True, metadata={"description": "The newest turn's model."})
    failedTurns = fields.List(fields.Nested(FailedTurnSchema))


class ConversationListSchema(Schema):
    """The user's conversations, most recently updated first."""

    conversations = fields.List(fields.Nested(ConversationSchema))
