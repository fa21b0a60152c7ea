"""How a turn ends, whoever ends it: the web side (cancel) or a worker (completed, failed).

Every ending goes through ``finish_turn``: one atomic status change, the message marked, the
terminal event published, the turn cache and cancel flag deleted, and the stream left to expire.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app
from sqlalchemy import update

from webapp.extensions import db
from webapp.models import Message, Turn
from webapp.models.base import utcnow
from webapp.turnstate import TurnState, get_redis

OPEN_STATUSES = ("queued", "running")
log = logging.getLogger("lookout.turns")


def turn_state(turn_id: str) -> TurnState:
    """Return the Redis side of a turn."""
    return TurnState(get_redis(), turn_id)


def open_turns(conversation_id: str):
    """Return the select of a conversation's queued or running turns."""
    return db.select(Turn).filter(
        Turn.conversation_id == conversation_id, Turn.status.in_(OPEN_STATUSES)
    )


def show_turn(turn: Turn, full: bool = True) -> dict[str, Any]:
    """Return a turn in the API's shape; ``full`` adds the assistant message, error and usage."""
    shown: dict[str, Any] = {
        "id": turn.id,
        "status": turn.status,
        "conversationId": turn.conversation_id,
        "userMessageId": turn.user_message_id,
    }
    if full:
        shown.update(
            assistantMessageId=turn.assistant_message_id,
            model=turn.model,
            error=turn.error,
            usage=turn.usage,
            createdAt=turn.created_at.isoformat(),
            finishedAt=turn.finished_at.isoformat() if turn.finished_at else None,
        )
    return shown


def finish_turn(
    turn_id: str, status: str, error: str | None = None, usage: dict | None = None
) -> bool:
    """End an open turn with ``status``; return False when it had already ended.

    Commits, with whatever the session holds besides (a worker's last reply parts), so what
    was said is kept even when someone else ended the turn first. ``usage`` replaces the
    turn's token usage.
    """
    now = utcnow()
    values: dict[str, Any] = {
        "status": status, "error": error, "finished_at": now, "heartbeat_at": now
    }  # fmt: skip
    if usage is not None:
        values["usage"] = usage
    ended = db.session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.status.in_(OPEN_STATUSES))
        .values(**values)
        .returning(Turn.assistant_message_id)
        .execution_options(synchronize_session=False)
    ).first()
    if ended is not None and ended.assistant_message_id:
        db.session.execute(
            update(Message)
            .where(Message.id == ended.assistant_message_id)
            .values(status=status)
            .execution_options(synchronize_session=False)
        )
    db.session.commit()
    if ended is None:
        return False
    state = turn_state(turn_id)
    event = {"completed": "turn.completed", "failed": "turn.failed"}.get(status, "turn.cancelled")
    state.publish(event, {"error": error} if error else {})
    state.end(current_app.config["EVENT_STREAM_TTL_SECONDS"])
    log.info("turn=%s status=%s", turn_id, status)
    return True


def cancel_turn(turn: Turn) -> bool:
    """Cancel an open turn at once: flag, revoke queued work, end the stream; False if ended."""
    state = turn_state(turn.id)
    state.request_cancel()
    for task_id in state.task_ids():
        _revoke(task_id)
    if not finish_turn(turn.id, "cancelled"):
        return False
    # Work still running must see the flag, which finish_turn deleted: raise it again for a
    # short while; the worker that notices the cancellation deletes it once its work stopped.
    state.request_cancel(ttl_seconds=120)
    return True


def _revoke(task_id: str) -> None:
    from webapp import queue

    queue.get_client().control.revoke(task_id)
