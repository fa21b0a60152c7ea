"""The base of the step and tool-call tasks: how such a task leaves the queue and runs again.

A task of a turn clears its work's queued marker as it starts (``core.turn.queued``): from
then on, work nobody claimed is lost unless this task runs again. A task the worker drops
unrun clears it too (Celery's signals): revoked (a Stop revokes its turn's queued tasks, an
operator may revoke one), expired, or rejected (a message the worker cannot read). Its work
is then lost for the reaper, which sends it again while the turn is open, rather than taken
for waiting until the turn's queue limit fails it.

A task runs again for two reasons, counted apart:

- the database did not answer (a restart, a failover): after 1, 2, 4, 8, then every 10
  seconds, until ``DATABASE_RETRY_SECONDS`` have passed since the first failure in a row; then
  the task gives up (it fails, and says so in the log) and leaves its turn to the reaper, which
  sends its work again if nobody claimed it, and fails the turn if a claim went stale.
- another task holds its work (``wait``): every few seconds while the holder beats and the
  turn runs, which the reaper bounds. The database answered, so a wait starts its count afresh.

Both used to share Celery's one count of retries, so each task lifted the database's bound in
order to wait: a step or tool call ran again every 10 s for as long as the database was down.

A task that gives up cannot write why to the database, which is what failed, so it leaves a
note in Redis, ``lookout:turn:<id>:database_gave_up`` (the time it gave up). The reaper reads it
when it fails the turn: if nothing beat for the turn since the note, the turn ends with
``GAVE_UP``, which names the database, rather than with the dead worker's or the queue's
sentence, which would send the user looking for the wrong fault.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis
from celery.signals import task_rejected, task_revoked
from flask import current_app
from kombu.exceptions import KombuError
from sqlalchemy.exc import OperationalError

from core.extensions import get_redis
from core.kept import read_versions_in, versions_read_once
from core.models.base import aware
from core.turn import queued
from core.turn.state import SAFETY_TTL_SECONDS, key
from workers.celery_app import AppContextTask, get_flask_app

# A message header: [when the database first failed this task, in epoch seconds, and how many
# times the task ran again since]. A retry carries its task's headers on.
DATABASE_DOWN = "lookout_database_down"
GAVE_UP = (
    "Lookout's database stopped answering before this turn finished. Send the message again; "
    "if this keeps happening, tell an administrator."
)
log = logging.getLogger("lookout.workers")


def database_retry_delay(retries: int) -> int:
    """Return the seconds before running again after ``retries`` runs again: 1, 2, 4, 8, 10."""
    return min(10, 2**retries)


class TurnTask(AppContextTask):
    """A step or tool-call task: clears its queued marker as it starts, runs again while the
    database does not answer (for at most ``DATABASE_RETRY_SECONDS``), and waits with ``wait``."""

    abstract = True
    max_retries = None  # the rule below bounds running again, not Celery's count
    # Whether the body runs inside ``core.kept.versions_read_once``, whose MGET goes in the
    # round trip that clears the queued marker (a task option: ``run_turn_step``'s).
    reads_versions = False

    def run_in_context(self, *args: Any, **kwargs: Any) -> Any:
        """Clear the queued marker, then run the task's body (again, while the database does
        not answer) and return its result."""
        if not self.reads_versions:
            return self._run(args, kwargs)
        with versions_read_once():
            return self._run(args, kwargs)

    def _run(self, args: tuple, kwargs: dict) -> Any:
        left_queue(self.name, self.request.id, args, self.reads_versions)
        try:
            return super().run_in_context(*args, **kwargs)
        except OperationalError as exc:
            self._run_again_or_give_up(exc, args)
            raise

    def wait(self, countdown: float) -> BaseException:
        """Return the Retry to raise to run again in ``countdown`` seconds, while another task
        holds this one's work."""
        return self.retry(countdown=countdown, headers=self._headers(None))

    def _run_again_or_give_up(self, exc: OperationalError, args: tuple) -> None:
        now = time.time()
        since, retries = self._down_since() or (now, 0)
        waited = now - since
        if waited >= current_app.config["DATABASE_RETRY_SECONDS"]:
            log.error(
                "%s[%s] gives up: the database has not answered for %.0f s; its turn is left "
                "to the reaper",
                self.name,
                self.request.id,
                waited,
            )
            found = queued.work_of(self.name, args)
            if found is not None:
                note_gave_up(found[0], now)
            return
        raise self.retry(
            exc=exc,
            countdown=database_retry_delay(retries),
            headers=self._headers([since, retries + 1]),
        )

    def _down_since(self) -> tuple[float, int] | None:
        value = (self.request.headers or {}).get(DATABASE_DOWN)
        if value is None:
            value = getattr(self.request, DATABASE_DOWN, None)
        return (float(value[0]), int(value[1])) if value else None

    def _headers(self, down: list | None) -> dict[str, Any]:
        headers = {k: v for k, v in (self.request.headers or {}).items() if k != DATABASE_DOWN}
        if down is not None:
            headers[DATABASE_DOWN] = down
        return headers


def left_queue(
    task_name: str, task_id: str | None, args: Sequence[Any], versions: bool = False
) -> None:
    """Clear the queued marker of a step or tool-call task that left the queue (it starts, or
    the worker dropped it unrun); in an app context. With ``versions`` (inside
    ``versions_read_once``), the versions of what the process keeps are read in the same round
    trip: a step sent them apart, at its first look."""
    found = queued.work_of(task_name, args)
    if found is None:
        return
    take = None
    try:
        with get_redis().pipeline(transaction=False) as pipe:
            queued.mark_left(*found, pipe=pipe)
            take = read_versions_in(pipe) if versions else None
            cleared, *read = pipe.execute(raise_on_error=False)
    except redis.RedisError as exc:
        cleared, read = exc, []
    if take is not None and read:
        take(read[0])
    if isinstance(cleared, Exception):  # the marker stays: the reaper takes the work for waiting
        log.warning("%s[%s]: its queued marker could not be cleared", task_name, task_id)


@task_revoked.connect(dispatch_uid="lookout.turn_task.revoked")
def _revoked(sender: Any = None, request: Any = None, **_kwargs: Any) -> None:
    # Revoked or expired: sent for a task dropped unrun, and for one stopped as it ran.
    args = getattr(request, "args", None) or ()
    with get_flask_app().app_context():
        left_queue(getattr(sender, "name", ""), getattr(request, "id", None), args)


@task_rejected.connect(dispatch_uid="lookout.turn_task.rejected")
def _rejected(message: Any = None, **_kwargs: Any) -> None:
    headers = message.headers or {}
    with get_flask_app().app_context():
        left_queue(headers.get("task", ""), headers.get("id"), message_args(message))


def message_args(message: Any) -> Sequence[Any]:
    """Return the positional arguments a task message carries; none when it cannot be read."""
    try:
        args = message.payload[0]  # the protocol's body: (args, kwargs, embed)
    except (KombuError, ValueError, LookupError, TypeError):
        return ()
    return args if isinstance(args, (list, tuple)) else ()


def note_gave_up(turn_id: str, when: float) -> None:
    """Note in Redis that a task of the turn gave up on the database at ``when`` (epoch s)."""
    try:
        get_redis().set(key(turn_id, "database_gave_up"), repr(when), ex=SAFETY_TTL_SECONDS)
    except redis.RedisError:  # the turn ends as if its worker had died
        log.warning("turn=%s: the note that its task gave up on the database was lost", turn_id)


def gave_up_since(turn_id: str, last_beat: datetime) -> bool:
    """Whether a task of the turn gave up on the database after ``last_beat``, so that the
    database, not a worker or the queue, is why it stopped (its work did not run since)."""
    try:
        noted = get_redis().get(key(turn_id, "database_gave_up"))
    except redis.RedisError:
        return False
    return noted is not None and float(noted) > aware(last_beat).timestamp()
