"""What a running turn's stale heartbeat means: its worker died, or its next work waits in the
queue.

Work that runs beats for its turn (a step from its claim, a tool call from its claim); nothing
beats while a turn's next task waits. So a turn whose heartbeat is stale is dead only when its
current step's work is held by someone: the step's model call (no tool calls stored yet) or a
call started and never finished. Otherwise it is waiting: calls nobody started, or every call
finished and the next step not yet claimed. The reaper sends the missing work again (a Redis
restart may have lost it) at most once per (turn, step) per ``TURN_STALE_SECONDS``, and fails
the turn only once it has waited ``TURN_QUEUE_WAIT_SECONDS``, with a sentence that says why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from webapp import metrics
from webapp.extensions import db
from webapp.models import ToolCall
from webapp.turn.lifecycle import finish_turn
from webapp.turn.state import get_redis
from workers.fanout import dispatch, send_step

BUSY = "The server was too busy to answer this message in time. Send it again in a few minutes."
log = logging.getLogger("lookout.reaper")


@dataclass(frozen=True)
class Waiting:
    """Work a turn waits for: step ``step``'s unstarted calls, or (no calls) step ``step``."""

    step: int
    call_ids: list[str] = field(default_factory=list)


def find_waiting(turn_id: str, step: int) -> Waiting | None:
    """Return what the turn, at ``step``, waits for in the queue; None when a worker holds
    its work (and, its heartbeat being stale, that worker died)."""
    calls = db.session.execute(
        db.select(ToolCall.call_id, ToolCall.started_at, ToolCall.outcome)
        .filter_by(turn_id=turn_id, step=step)
        .order_by(ToolCall.position)
    ).all()
    db.session.rollback()
    if not calls:  # the step's model call was claimed and stopped beating
        return None
    if any(c.started_at is not None and c.outcome is None for c in calls):
        return None
    unstarted = [c.call_id for c in calls if c.started_at is None]
    return Waiting(step, unstarted) if unstarted else Waiting(step + 1)


def send_again(turn_id: str, waiting: Waiting, period: float) -> bool:
    """Send the work the turn waits for, unless it was sent within ``period`` seconds; return
    whether it was sent."""
    once = f"lookout:reaper:resent:{turn_id}:{waiting.step}"
    if not get_redis().set(once, "1", nx=True, ex=max(1, int(period))):
        return False
    if waiting.call_ids:
        dispatch(turn_id, waiting.step, waiting.call_ids)
        what = f"its {len(waiting.call_ids)} unstarted tool call(s) of step {waiting.step}"
    else:
        send_step(turn_id, waiting.step)
        what = f"step {waiting.step}"
    metrics.reaper_action("resent_work")
    log.warning("turn=%s waits in the queue: %s sent again", turn_id, what)
    return True


def fail_waiting_turn(turn_id: str, waited: float, stale_before: datetime) -> bool:
    """Fail a turn that waited too long in the queue, keeping what its reply showed; False if
    it had ended, or if its work started after all (it beat since ``stale_before``)."""
    if not finish_turn(turn_id, "failed", BUSY, stale_before=stale_before):
        return False
    metrics.reaper_action("failed_waiting_turn")
    log.warning("turn=%s failed: it waited %.0f s in the queue (server too busy)", turn_id, waited)
    return True
