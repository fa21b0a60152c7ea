"""Chat records: conversations, their branching messages, turns, what each model step said,
and each tool call's raw result."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column, relationship

from core.extensions import db
from core.models.base import ID_LENGTH, created_column, id_column, utcnow

MESSAGE_ROLES = ("user", "assistant")
# core.turn.states.OPEN_STATUSES as SQL, the predicate of the index of open turns.
OPEN_TURNS = "status IN ('queued', 'running')"


class Conversation(db.Model):
    """A conversation owned by one user."""

    __tablename__ = "conversations"

    id: Mapped[str] = id_column()
    owner_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True
    )
    title: Mapped[str] = mapped_column(String(200), nullable=False, default="")
    created_at: Mapped[datetime] = created_column()
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, default=utcnow, onupdate=utcnow
    )

    messages: Mapped[list[Message]] = relationship(
        back_populates="conversation", cascade="all, delete-orphan", order_by="Message.created_at"
    )


class Message(db.Model):
    """One message; parent_id links it into a tree, so edits and regenerations make branches."""

    __tablename__ = "messages"

    id: Mapped[str] = id_column()
    conversation_id: Mapped[str] = mapped_column(
        String(ID_LENGTH),
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )
    parent_id: Mapped[str | None] = mapped_column(
        String(ID_LENGTH), ForeignKey("messages.id", ondelete="SET NULL"), index=True
    )
    role: Mapped[str] = mapped_column(String(20), nullable=False)
    parts: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="completed")
    # How an ended reply used the web (core/turn/grounding.py), derived with its parts.
    grounding: Mapped[dict | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = created_column()

    conversation: Mapped[Conversation] = relationship(back_populates="messages")


class Turn(db.Model):
    """One run of the assistant answering a user message; roles and generation fixed at start."""

    __tablename__ = "turns"
    __table_args__ = (
        # The open turns by conversation: a POST counts its user's (core/turn_starts.py).
        Index(
            "ix_turns_open_conversation_id",
            "conversation_id",
            "status",
            sqlite_where=text(OPEN_TURNS),
            postgresql_where=text(OPEN_TURNS),
        ),
    )

    id: Mapped[str] = id_column()
    conversation_id: Mapped[str] = mapped_column(
        String(ID_LENGTH),
        ForeignKey("conversations.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    )
    user_message_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False
    )
    assistant_message_id: Mapped[str | None] = mapped_column(
        String(ID_LENGTH), ForeignKey("messages.id", ondelete="SET NULL"), index=True
    )
    status: Mapped[str] = mapped_column(String(20), nullable=False, default="queued", index=True)
    model: Mapped[str] = mapped_column(String(300), nullable=False)
    generation: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    roles: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    error: Mapped[str | None] = mapped_column(Text)
    usage: Mapped[dict | None] = mapped_column(JSON)
    step: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = created_column()
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ToolCall(db.Model):
    """One tool call of a turn with its raw output or error; keyed by (turn_id, call_id)."""

    __tablename__ = "tool_calls"

    turn_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True
    )
    call_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    step: Mapped[int] = mapped_column(Integer, nullable=False)
    position: Mapped[int] = mapped_column(Integer, nullable=False)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    # The tool as the step offered it: its plugin, or the tool source that lists it, and
    # whether its output is untrusted (workers/offer.py).
    plugin: Mapped[str | None] = mapped_column(String(200))
    source: Mapped[str | None] = mapped_column(String(200))
    untrusted: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    # What the call does for the answer's grounding: "search", "read" or None (Tool.grounding).
    grounding: Mapped[str | None] = mapped_column(String(20))
    input: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    output: Mapped[object | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str | None] = mapped_column(String(20))
    citations: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The task that claimed the call (core/turn/calls.py): only its retries run it again.
    task_id: Mapped[str | None] = mapped_column(String(64))


class TurnStep(db.Model):
    """What one model step of a turn said: its reasoning, its text and the sources the model
    cited while it streamed (and, on the last step, the follow-up questions offered), stored
    with the step's tool calls (or its ending) in one transaction; keyed by (turn_id, step).
    The reply is derived from these and the tool calls (core/turn/replies.py).
    """

    __tablename__ = "turn_steps"

    turn_id: Mapped[str] = mapped_column(
        String(ID_LENGTH), ForeignKey("turns.id", ondelete="CASCADE"), primary_key=True
    )
    step: Mapped[int] = mapped_column(Integer, primary_key=True)
    text: Mapped[str] = mapped_column(Text, nullable=False, default="")
    # The sources the model cited while it streamed, in order, as ``{url, title}``.
    sources: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    # What the model reasoned before its text (reasoning deltas, <think> text); never replayed.
    reasoning: Mapped[str] = mapped_column(Text, nullable=False, default="")
    # The questions the model offered to ask next, after the turn's last step (or None).
    follow_ups: Mapped[list | None] = mapped_column(JSON)
