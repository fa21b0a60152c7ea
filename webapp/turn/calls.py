"""A tool call's claim: the first delivery of its task runs it, and only that task runs it again.

A call's task can be delivered more than once: the reaper sends again the calls of a turn that
waits in the queue (a restarted Redis may have lost them), and a step taken over sends its
calls again. Each delivery claims the call with one conditional UPDATE, so one of them runs
the tool; the claim stores the task's id, so that task's own retries (the database did not
answer) and its redelivery by Redis (its worker died) run the call again, and nothing else does.
"""

from __future__ import annotations

from sqlalchemy import update

from webapp.extensions import db
from webapp.models import ToolCall, Turn
from webapp.models.base import utcnow


def claim_call(turn_id: str, call_id: str, task_id: str) -> str:
    """Claim a tool call for the task ``task_id``: "claimed", "again" (this task claimed it
    before), "busy" (another task runs it), "done" (it has its outcome) or "gone".

    A claim also beats for the turn: from here on the call's work is held by this worker.
    Uncommitted: the caller commits it with the call's reads, before the tool runs.
    """
    now = utcnow()
    claimed = db.session.execute(
        update(ToolCall)
        .where(
            ToolCall.turn_id == turn_id,
            ToolCall.call_id == call_id,
            ToolCall.started_at.is_(None),
            ToolCall.outcome.is_(None),
        )
        .values(started_at=now, task_id=task_id)
        .execution_options(synchronize_session=False)
    ).rowcount
    call = db.session.get(ToolCall, (turn_id, call_id), populate_existing=True)
    if call is None:
        return "gone"
    if not claimed:
        if call.outcome is not None:
            return "done"
        if call.task_id != task_id:
            return "busy"
        call.started_at = now
    db.session.execute(
        update(Turn)
        .where(Turn.id == turn_id, Turn.status == "running")
        .values(heartbeat_at=now)
        .execution_options(synchronize_session=False)
    )
    return "claimed" if claimed else "again"
