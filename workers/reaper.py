"""Ends turns whose worker died, sends again the work the queue lost, and fails turns that
waited in the queue too long.

A worker on the threads pool that is killed loses its in-flight tasks until Redis redelivers
them after ``visibility_timeout`` (half an hour); the reaper ends such turns within about a
minute instead, with a reason the user reads. A Redis that restarts without persistence (as
./run's does) loses queued tasks. A turn whose heartbeat is stale, or that is still queued,
only because its next task waits in a long queue is not dead: ``workers.stale`` tells the
cases apart, sends again only work whose task is no longer in the queue (each task runs its
work once however often it is delivered: the work is claimed atomically), and fails the turn
as too busy once it has waited ``TURN_QUEUE_WAIT_SECONDS``. One worker at a time reaps (a
Redis lock).

A turn whose task gave up on the database (``workers.turn_task``) goes stale like a dead
worker's, or waits like a busy queue's; the reaper ends it with the database's sentence when
the task's note is newer than the turn's last beat.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from celery.signals import worker_ready
from flask import current_app

from core import metrics
from core.extensions import db, get_redis
from core.models import Turn
from core.models.base import aware, utcnow
from core.turn.lifecycle import finish_turn
from workers.stale import Waiting, find_waiting, judge_waiting
from workers.turn_task import GAVE_UP, gave_up_since

DIED = (
    "The worker answering this turn stopped before it finished. Send the message again; "
    "if this keeps happening, tell an administrator."
)
log = logging.getLogger("lookout.reaper")


def reap_stale_turns(stale_seconds: float, wait_seconds: float) -> list[str]:
    """Judge every running turn whose heartbeat is older than ``stale_seconds``: fail it when
    its worker died, send again what it waits for if the queue lost it, or fail it once it has
    waited ``wait_seconds``; return the ids of the turns failed."""
    now = utcnow()
    stale_before = now - timedelta(seconds=stale_seconds)
    stale = db.session.execute(
        db.select(Turn.id, Turn.step, Turn.heartbeat_at).filter(
            Turn.status == "running", Turn.heartbeat_at < stale_before
        )
    ).all()
    db.session.rollback()
    failed = []
    for turn_id, step, heartbeat_at in stale:
        # Its work may be claimed from here on: the endings below hold only if nothing beat.
        waiting = find_waiting(turn_id, step)
        waited = (now - aware(heartbeat_at)).total_seconds()
        if waiting is None:
            if fail_stopped_turn(turn_id, heartbeat_at, stale_before):
                failed.append(turn_id)
        elif judge_waiting(turn_id, waiting, waited, now, stale_seconds, wait_seconds):
            failed.append(turn_id)
    return failed


def reap_queued_turns(stale_seconds: float, wait_seconds: float) -> list[str]:
    """Judge every turn queued longer than ``stale_seconds`` (its first step never claimed):
    send that step again if the queue lost it, or fail the turn once it has waited
    ``wait_seconds``; return the ids of the turns failed."""
    now = utcnow()
    waiting = db.session.execute(
        db.select(Turn.id, Turn.created_at).filter(
            Turn.status == "queued", Turn.created_at < now - timedelta(seconds=stale_seconds)
        )
    ).all()
    db.session.rollback()
    failed = []
    for turn_id, created_at in waiting:
        waited = (now - aware(created_at)).total_seconds()
        first = Waiting(0)
        if judge_waiting(turn_id, first, waited, now, stale_seconds, wait_seconds, "requeued_turn"):
            failed.append(turn_id)
    return failed


def fail_stopped_turn(turn_id: str, last_beat: datetime, stale_before: datetime) -> bool:
    """Fail a turn whose work stopped beating at ``last_beat``: as its task gave up on the
    database, if one did since (the note in Redis), else as its worker died. False if it had
    ended, or if something beat for it since ``stale_before``."""
    if not gave_up_since(turn_id, last_beat):
        return fail_dead_turn(turn_id, stale_before)
    if not finish_turn(turn_id, "failed", GAVE_UP, stale_before=stale_before):
        return False
    metrics.reaper_action("failed_turn")
    log.warning("turn=%s failed: its task gave up on the database", turn_id)
    return True


def fail_dead_turn(turn_id: str, stale_before: datetime | None = None) -> bool:
    """Fail a turn whose worker died, keeping what its reply showed; False if it had ended
    (or, given ``stale_before``, if something beat for it since).

    The reaper and a step redelivered after its worker died (``steps.take_over``) both end
    such turns here, so the user reads the same ending whichever comes first.
    """
    if not finish_turn(turn_id, "failed", DIED, stale_before=stale_before):
        return False
    metrics.reaper_action("failed_turn")
    log.warning("turn=%s failed: its heartbeat stopped (worker died)", turn_id)
    return True


def reap_once() -> list[str]:
    """Reap while holding the cluster-wide lock; return the turns failed (none without the lock)."""
    config = current_app.config
    interval = config["REAPER_INTERVAL_SECONDS"]
    lock = f"lookout:reaper:{config['CELERY_QUEUE']}"  # one deployment, one queue, one reaper
    if not get_redis().set(lock, "1", nx=True, ex=max(1, int(interval))):
        return []
    metrics.reaper_action("sweep")
    stale, wait = config["TURN_STALE_SECONDS"], config["TURN_QUEUE_WAIT_SECONDS"]
    return reap_queued_turns(stale, wait) + reap_stale_turns(stale, wait)


def run_forever(app) -> None:
    """Reap every REAPER_INTERVAL_SECONDS until the process ends."""
    stop = threading.Event()
    while not stop.wait(app.config["REAPER_INTERVAL_SECONDS"]):
        with app.app_context():
            try:
                reap_once()
            except Exception:  # the reaper must outlive a database or Redis hiccup
                log.exception("reaping stale turns failed; trying again later")
            finally:
                db.session.remove()


@worker_ready.connect
def start_reaper(**_kwargs) -> None:
    """Start the reaper thread when a worker process is ready."""
    from workers.celery_app import get_flask_app

    app = get_flask_app()
    threading.Thread(target=run_forever, args=(app,), name="reaper", daemon=True).start()
