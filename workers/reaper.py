"""Ends turns whose worker died, and sends again the work of turns whose task may be lost.

A worker on the threads pool that is killed loses its in-flight tasks until Redis redelivers
them after ``visibility_timeout`` (half an hour); the reaper ends such turns within about a
minute instead, with a reason the user reads. A Redis that restarts without persistence (as
./run's does) loses queued tasks: a turn still queued after ``TURN_STALE_SECONDS`` gets its
first step sent once more, which runs once however often it is delivered (the step is claimed
atomically). A running turn whose heartbeat is stale only because its next task waits in a
long queue is not dead: ``workers.stale`` tells the two apart, and sends its work again or
fails it as too busy. One worker at a time reaps (a Redis lock).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from celery.signals import worker_ready
from flask import current_app

from webapp import metrics
from webapp.extensions import db
from webapp.models import Turn
from webapp.models.base import aware, utcnow
from webapp.turn.lifecycle import finish_turn
from webapp.turn.state import get_redis
from workers.fanout import send_step
from workers.stale import fail_waiting_turn, find_waiting, send_again

DIED = (
    "The worker answering this turn stopped before it finished. Send the message again; "
    "if this keeps happening, tell an administrator."
)
log = logging.getLogger("lookout.reaper")


def reap_stale_turns(stale_seconds: float, wait_seconds: float) -> list[str]:
    """Judge every running turn whose heartbeat is older than ``stale_seconds``: fail it when
    its worker died, send again what it waits for in the queue, or fail it once it has waited
    ``wait_seconds``; return the ids of the turns failed."""
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
            if fail_dead_turn(turn_id, stale_before):
                failed.append(turn_id)
        elif waited >= wait_seconds:
            if fail_waiting_turn(turn_id, waited, now - timedelta(seconds=wait_seconds)):
                failed.append(turn_id)
        else:
            send_again(turn_id, waiting, stale_seconds)
    return failed


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


def requeue_lost_turns(stale_seconds: float) -> list[str]:
    """Send step 0 again for turns queued longer than ``stale_seconds``; return their ids.

    Once per turn for as long as Redis remembers having done it: a restart that lost the task
    forgets that too, and a turn merely waiting behind others gets one harmless duplicate.
    """
    cutoff = utcnow() - timedelta(seconds=stale_seconds)
    waiting = db.session.scalars(
        db.select(Turn.id).filter(Turn.status == "queued", Turn.created_at < cutoff)
    ).all()
    db.session.rollback()
    sent = []
    for turn_id in waiting:
        if get_redis().set(f"lookout:reaper:requeued:{turn_id}", "1", nx=True, ex=24 * 3600):
            send_step(turn_id, 0)
            metrics.reaper_action("requeued_turn")
            log.warning("turn=%s still queued: its first step was sent again", turn_id)
            sent.append(turn_id)
    return sent


def reap_once() -> list[str]:
    """Reap while holding the cluster-wide lock; return the turns failed (none without the lock)."""
    config = current_app.config
    interval = config["REAPER_INTERVAL_SECONDS"]
    lock = f"lookout:reaper:{config['CELERY_QUEUE']}"  # one deployment, one queue, one reaper
    if not get_redis().set(lock, "1", nx=True, ex=max(1, int(interval))):
        return []
    metrics.reaper_action("sweep")
    requeue_lost_turns(config["TURN_STALE_SECONDS"])
    return reap_stale_turns(config["TURN_STALE_SECONDS"], config["TURN_QUEUE_WAIT_SECONDS"])


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
