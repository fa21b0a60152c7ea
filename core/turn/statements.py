"""The statements every step and tool call of a turn sends, each built once per process.

Building an ORM statement (its clauses, then the cache key SQLAlchemy looks its compiled form
up by) cost a step about as much CPU as running it: the claim, the reply's row, the usage and
the ending were each built anew on every step. Each is made here once, with its values as
bound parameters, and run with them (``core.turn.lifecycle``, ``core.turn.calls``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import bindparam, insert, or_, update

from core.models import Message, ToolCall, Turn
from core.turn.states import OPEN_STATUSES

# Bound parameters are not named as columns are (SQLAlchemy keeps those names for the SET
# clause's own). Run with these: the returned row is the turn (or the call) as the statement
# left it, and nothing else in the session needs the ORM's evaluation of the WHERE against
# loaded objects.
RETURNED = {"populate_existing": True, "synchronize_session": False}
UNSYNCHRONIZED = {"synchronize_session": False}

_BUILT: dict[Any, Any] = {}


def _now() -> Any:
    # Typed as the columns are, so that each dialect stores the time as it does a column's.
    return bindparam("now", type_=Turn.__table__.c.heartbeat_at.type)


def _once(key: Any, build: Callable[[], Any]) -> Any:
    statement = _BUILT.get(key)
    if statement is None:
        statement = _BUILT[key] = build()
    return statement


def first_claim() -> Any:
    """Return the claim of a queued turn's first step (``turn``, ``now``), returning it."""
    return _once(
        "first_claim",
        lambda: (
            update(Turn)
            .where(Turn.id == bindparam("turn"), Turn.status == "queued")
            .values(heartbeat_at=_now(), status="running", started_at=_now())
            .values(step=0)
            .returning(Turn)
        ),
    )


def next_claim() -> Any:
    """Return the claim of a running turn's step ``new_step`` after ``previous`` (``turn``,
    ``now``), returning the turn."""
    return _once(
        "next_claim",
        lambda: (
            update(Turn)
            .where(
                Turn.id == bindparam("turn"),
                Turn.status == "running",
                Turn.step == bindparam("previous"),
            )
            .values(heartbeat_at=_now(), step=bindparam("new_step"))
            .returning(Turn)
        ),
    )


def new_reply() -> Any:
    """Return the INSERT of a turn's empty running reply (``new_id``, ``new_conversation``,
    ``new_parent``, ``new_parts``, ``new_created_at``)."""
    return _once(
        "new_reply",
        lambda: insert(Message).values(
            id=bindparam("new_id"),
            conversation_id=bindparam("new_conversation"),
            parent_id=bindparam("new_parent"),
            role="assistant",
            parts=bindparam("new_parts", type_=Message.__table__.c.parts.type),
            status="running",
            created_at=bindparam("new_created_at", type_=Message.__table__.c.created_at.type),
        ),
    )


def reply_of_turn() -> Any:
    """Return the UPDATE that sets a turn's (``turn``) reply (``reply``)."""
    return _once(
        "reply_of_turn",
        lambda: (
            update(Turn)
            .where(Turn.id == bindparam("turn"))
            .values(assistant_message_id=bindparam("reply"))
        ),
    )


def running_usage() -> Any:
    """Return the UPDATE of a running turn's (``turn``) token usage (``new_usage``)."""
    return _once(
        "running_usage",
        lambda: (
            update(Turn)
            .where(Turn.id == bindparam("turn"), Turn.status == "running")
            .values(usage=bindparam("new_usage", type_=Turn.__table__.c.usage.type))
        ),
    )


def ending(with_usage: bool, unless_beaten: bool) -> Any:
    """Return the UPDATE that ends an open turn (``turn``: ``new_status``, ``new_error``,
    ``now``; ``new_usage`` when ``with_usage``; only if nothing beat since ``stale_before``
    when ``unless_beaten``), returning what the ending counts and writes."""

    def build() -> Any:
        where = [Turn.id == bindparam("turn"), Turn.status.in_(OPEN_STATUSES)]
        if unless_beaten:  # a queued turn never beat: a claim would have beaten
            stale = bindparam("stale_before", type_=Turn.__table__.c.heartbeat_at.type)
            where.append(or_(Turn.heartbeat_at.is_(None), Turn.heartbeat_at < stale))
        values: dict[str, Any] = {
            "status": bindparam("new_status"),
            "error": bindparam("new_error"),
            "finished_at": _now(),
            "heartbeat_at": _now(),
        }
        if with_usage:
            values["usage"] = bindparam("new_usage", type_=Turn.__table__.c.usage.type)
        return (
            update(Turn)
            .where(*where)
            .values(**values)
            .returning(
                Turn.assistant_message_id, Turn.step, Turn.conversation_id, Turn.model, Turn.usage
            )
        )

    return _once(("ending", with_usage, unless_beaten), build)


def call_claim() -> Any:
    """Return the claim of a tool call nobody started (``turn``, ``call``; sets ``now`` and
    ``new_task``), returning the call."""
    return _once(
        "call_claim",
        lambda: (
            update(ToolCall)
            .where(
                ToolCall.turn_id == bindparam("turn"),
                ToolCall.call_id == bindparam("call"),
                ToolCall.started_at.is_(None),
                ToolCall.outcome.is_(None),
            )
            .values(started_at=_now(), task_id=bindparam("new_task"))
            .returning(ToolCall)
        ),
    )


def beat() -> Any:
    """Return the beat of a running turn (``turn``, ``now``), returning the turn."""
    return _once(
        "beat",
        lambda: (
            update(Turn)
            .where(Turn.id == bindparam("turn"), Turn.status == "running")
            .values(heartbeat_at=_now())
            .returning(Turn)
        ),
    )
