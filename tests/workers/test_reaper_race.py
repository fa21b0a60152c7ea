"""The reaper's verdict on a stale turn holds only while nothing beats for it.

Regression: the 80-user overload run (docs/reliability.md) failed 2–3 turns with "The worker
answering this turn stopped" although their worker was alive: the reaper listed the turn as
stale, a worker claimed its waiting tool call, and the reaper then read a call started and not
finished, took it for a dead worker's, and failed the turn under the running call.
"""

from __future__ import annotations

from datetime import timedelta

from core.extensions import db
from core.models import ToolCall, Turn
from core.models.base import utcnow
from core.turn.calls import claim_call
from tests.support.turns import stored_turn
from workers.reaper import fail_dead_turn


def test_a_call_claimed_after_the_reaper_listed_its_turn_keeps_the_turn_running(app, make_user):
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    with app.app_context():
        long_ago = utcnow() - timedelta(seconds=120)
        db.session.get(Turn, turn_id).heartbeat_at = long_ago
        db.session.add(
            ToolCall(turn_id=turn_id, call_id="c1", step=0, position=0, name="echo", input={})
        )
        db.session.commit()
        listed_as_stale_before = utcnow() - timedelta(seconds=60)
        assert claim_call(turn_id, "c1", "task-1") == "claimed"  # a worker takes the call
        db.session.commit()
        assert not fail_dead_turn(turn_id, listed_as_stale_before)
        assert db.session.get(Turn, turn_id).status == "running"
        # A turn nothing beat for since is failed as before.
        db.session.get(Turn, turn_id).heartbeat_at = long_ago
        db.session.commit()
        assert fail_dead_turn(turn_id, listed_as_stale_before)
        db.session.expire_all()
        assert db.session.get(Turn, turn_id).status == "failed"


def test_a_second_delivery_of_a_claimed_call_is_told_it_is_busy_and_its_retry_runs_it(
    app, make_user
):
    turn_id = stored_turn(app, make_user("sam").id, "running", with_reply=True)
    with app.app_context():
        db.session.add(
            ToolCall(turn_id=turn_id, call_id="c1", step=0, position=0, name="echo", input={})
        )
        db.session.commit()
        assert claim_call(turn_id, "c1", "task-1") == "claimed"
        db.session.commit()
        assert claim_call(turn_id, "c1", "task-2") == "busy"  # sent again, or a duplicate
        assert claim_call(turn_id, "c1", "task-1") == "again"  # its own retry or redelivery
        db.session.commit()
        call = db.session.get(ToolCall, (turn_id, "c1"))
        call.outcome = "ok"
        db.session.commit()
        assert claim_call(turn_id, "c1", "task-1") == "done"
        assert claim_call(turn_id, "c2", "task-3") == "gone"
