"""How a turn ends, whoever ends it: the web side (cancel) or a worker (completed, failed).

Every ending goes through ``finish_turn``: one atomic status change, the message marked and
given every part the user saw, the terminal event published, the turn cache and cancel flag
deleted, and the stream left to expire.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app
from sqlalchemy import update

from webapp import turn_events
from webapp.extensions import db
from webapp.models import Message, Turn
from webapp.models.base import utcnow
from webapp.replies import kept_parts
from webapp.turnstate import TurnState, get_redis

OPEN_STATUSES = ("queued", "running")
CUT_OFF = "The answer above was cut off."
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
    turn_id: str,
    status: str,
    error: str | None = None,
    usage: dict | None = None,
    parts: list[dict[str, Any]] | None = None,
) -> bool:
    """End an open turn with ``status``; return False when it had already ended.

    The reply keeps ``parts`` when given (what the step ending the turn said), else every part
    the user saw (``kept_parts``: the last step's tool results, or the text its events showed);
    a failure that keeps anything says so in its error. Nothing is written when someone else
    ended the turn first. Commits, with whatever the session holds besides. ``usage``
    replaces the turn's token usage.
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
        .returning(Turn.assistant_message_id, Turn.step)
        .execution_options(synchronize_session=False)
    ).first()
    if ended is not None and ended.assistant_message_id:
        if parts is None:
            stored = db.session.scalar(
                db.select(Message.parts).filter_by(id=ended.assistant_message_id)
            )
            parts = kept_parts(turn_state(turn_id), list(stored or []), ended.step)
        if status == "failed" and parts and error:
            error = f"{CUT_OFF} {error}"
            db.session.execute(
                update(Turn)
                .where(Turn.id == turn_id)
                .values(error=error)
                .execution_options(synchronize_session=False)
            )
        db.session.execute(
            update(Message)
            .where(Message.id == ended.assistant_message_id)
            .values(status=status, parts=parts)
            .execution_options(synchronize_session=False)
        )
    db.session.commit()
    if ended is None:
        return False
    state = turn_state(turn_id)
    turn_events.turn_ended(state, status, error)
    state.end(current_app.config["EVENT_STREAM_TTL_SECONDS"])
    log.info("turn=%s status=%s", turn_id, status)
    return True


def cancel_turn(turn: Turn) -> bool:
    """Cancel an open turn at once: end it, keeping what its reply showed, then flag its running
    work and revoke its queued work; False if it had already ended.

    Ending first means a step that notices the flag cannot end the turn itself in between and
    turn the user's Stop into a conflict; work that checks the turn in between finds it ended.
    """
    state = turn_state(turn.id)
    task_ids = state.task_ids()  # finish_turn forgets them
    if not finish_turn(turn.id, "cancelled"):
        return False
    # finish_turn deleted the flag: raise it for a short while; the worker that notices the
    # cancellation deletes it once its work stopped.
    state.request_cancel(ttl_seconds=120)
    for task_id in task_ids:
        _revoke(task_id)
    return True


def _revoke(task_id: str) -> None:
    from webapp import queue

    queue.get_client().control.revoke(task_id)
