"""What a turn's stale heartbeat means: its worker died, or its work waits in the queue, or
the queue lost it.

Work that runs beats for its turn (a step from its claim, a tool call from its claim); nothing
beats while a turn's next task waits. So a running turn whose heartbeat is stale is dead only
when its current step's work is held by someone: the step's model call (no tool calls stored
yet) or a call started and never finished. Otherwise it is waiting: calls nobody started, or
every call finished and the next step not yet claimed; a queued turn waits for its first step.
The reaper sends the waiting work again only when it is not in the queue (``core.turn.
queued``: a Redis restart lost it, or its task gave up before claiming it), at most once per
(turn, step) per ``TURN_STALE_SECONDS``; work merely waiting behind other work is left alone,
as sending it again would only lengthen the queue. The turn fails once it has waited
``TURN_QUEUE_WAIT_SECONDS``, with a sentence that says why: the server was too busy, or,
when a task of the turn gave up on the database since it last beat, the database stopped
answering (a database down longer than that wait leaves the reaper nothing else to do).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core import metrics
from core.extensions import db, get_redis
from core.models import ToolCall
from core.turn import queued
from core.turn.lifecycle import finish_turn
from workers.fanout import dispatch, send_step
from workers.turn_task import GAVE_UP, gave_up_since

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


def is_lost(turn_id: str, waiting: Waiting) -> bool:
    """Whether some of the work the turn waits for has no task in the queue."""
    works = [queued.call_work(c) for c in waiting.call_ids] or [queued.step_work(waiting.step)]
    return not queued.all_queued(turn_id, works)


def send_lost(turn_id: str, waiting: Waiting, period: float, action: str = "resent_work") -> bool:
    """Send the work the turn waits for, if the queue lost some of it and it was not sent
    within ``period`` seconds; return whether it was sent (counted as ``action``).

    A step's unstarted calls go out together; the task of the last of the step's calls to
    end runs the next step (``workers.next_steps``). A next step sent here is one whose calls
    all ended and which nobody claimed: the task that stored the last outcome stopped before
    it claimed the step (its worker died, or it gave up on the database).
    """
    if not is_lost(turn_id, waiting):
        return False
    once = f"lookout:reaper:resent:{turn_id}:{waiting.step}"
    if not get_redis().set(once, "1", nx=True, ex=max(1, int(period))):
        return False
    if waiting.call_ids:
        dispatch(turn_id, waiting.step, waiting.call_ids)
        what = f"its {len(waiting.call_ids)} unstarted tool call(s) of step {waiting.step}"
    else:
        send_step(turn_id, waiting.step)
        what = f"step {waiting.step}"
    metrics.reaper_action(action)
    log.warning("turn=%s waits for work the queue lost: %s sent again", turn_id, what)
    return True


def fail_waiting_turn(
    turn_id: str, waited: float, stale_before: datetime, last_beat: datetime
) -> bool:
    """Fail a turn that waited too long since ``last_beat``, keeping what its reply showed:
    as too busy, or as the database's fault if a task of it gave up on the database since;
    False if it had ended, or if its work started after all (it beat since ``stale_before``)."""
    database = gave_up_since(turn_id, last_beat)
    if not finish_turn(turn_id, "failed", GAVE_UP if database else BUSY, stale_before=stale_before):
        return False
    metrics.reaper_action("failed_waiting_turn")
    why = "its task gave up on the database" if database else "server too busy"
    log.warning("turn=%s failed: it waited %.0f s in the queue (%s)", turn_id, waited, why)
    return True


def judge_waiting(
    turn_id: str,
    waiting: Waiting,
    waited: float,
    now: datetime,
    stale_seconds: float,
    wait_seconds: float,
    resent: str = "resent_work",
) -> bool:
    """Fail a turn that waited ``wait_seconds`` for ``waiting`` (return True), or send that
    work again if the queue lost it (counted as ``resent``), or leave it to wait."""
    if waited >= wait_seconds:
        last_beat = now - timedelta(seconds=waited)  # or, for a queued turn, its creation
        return fail_waiting_turn(turn_id, waited, now - timedelta(seconds=wait_seconds), last_beat)
    if not send_lost(turn_id, waiting, stale_seconds, resent):
        note_waiting(turn_id, waiting, wait_seconds)
    return False


def note_waiting(turn_id: str, waiting: Waiting, wait_seconds: float) -> None:
    """Log, once per turn and step, that the turn's work waits in the queue and is left so."""
    noted = f"lookout:reaper:noted:{turn_id}:{waiting.step}"
    if get_redis().set(noted, "1", nx=True, ex=max(1, int(wait_seconds))):
        log.info("turn=%s waits in the queue for step %s: left to wait", turn_id, waiting.step)
