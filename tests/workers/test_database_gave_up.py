"""A turn whose task gave up on the database is failed by the reaper saying so, not as a dead
worker's or a busy queue's, and only while nothing beat for it since (real Redis and SQLite).

Regression: a step or tool call that gave up on the database after claiming its work left the
turn to the reaper, which failed it with "The worker answering this turn stopped before it
finished." though the worker was fine: the database was down for over a minute.
tests/faults/test_postgres_restart.py runs the whole story with a real worker and PostgreSQL.
"""

from __future__ import annotations

import time
from datetime import timedelta

from core.extensions import db
from core.models import Turn
from core.models.base import utcnow
from tests.support.turns import stored_turn
from workers.reaper import reap_queued_turns, reap_stale_turns
from workers.turn_task import note_gave_up

GAVE_UP = (
    "Lookout's database stopped answering before this turn finished. Send the message again; "
    "if this keeps happening, tell an administrator."
)
DIED = "The worker answering this turn stopped before it finished."
BUSY = "The server was too busy to answer this message in time."


def stale_turn(app, owner_id: str, beat_seconds_ago: float) -> str:
    """Store a running turn whose step's model call last beat ``beat_seconds_ago``."""
    turn_id = stored_turn(app, owner_id, "running", with_reply=True)
    with app.app_context():
        db.session.get(Turn, turn_id).heartbeat_at = utcnow() - timedelta(seconds=beat_seconds_ago)
        db.session.commit()
    return turn_id


def error_of(app, turn_id: str) -> str:
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        assert turn.status == "failed"
        return turn.error


def test_a_stale_turn_whose_task_gave_up_on_the_database_fails_naming_the_database(app, make_user):
    owner = make_user("dana").id
    gave_up = stale_turn(app, owner, beat_seconds_ago=120)
    died = stale_turn(app, owner, beat_seconds_ago=120)
    with app.app_context():
        note_gave_up(gave_up, time.time() - 60)  # after its last beat: nothing ran since
        # A task of this one gave up before its last beat: its work ran again, then stopped.
        note_gave_up(died, time.time() - 200)
        assert sorted(reap_stale_turns(60, 600)) == sorted([gave_up, died])
    assert error_of(app, gave_up) == GAVE_UP
    assert error_of(app, died).startswith(DIED)


def test_a_queued_turn_whose_first_step_gave_up_on_the_database_fails_naming_the_database(
    app, make_user
):
    owner = make_user("eli").id
    gave_up = stored_turn(app, owner, "queued")
    busy = stored_turn(app, owner, "queued")
    with app.app_context():
        for turn_id in (gave_up, busy):
            db.session.get(Turn, turn_id).created_at = utcnow() - timedelta(seconds=700)
        db.session.commit()
        note_gave_up(gave_up, time.time() - 100)
        assert sorted(reap_queued_turns(3, 600)) == sorted([gave_up, busy])
    assert error_of(app, gave_up) == GAVE_UP
    assert error_of(app, busy).startswith(BUSY)
