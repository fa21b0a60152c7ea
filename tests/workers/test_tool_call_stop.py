"""A tool call's task watches its turn for a Stop once: the watcher's signal, read as the task
takes the turn on, says whether the turn was stopped before the call started, and stops the
tool while it runs (real Redis and SQLite; the tool itself is stopped in
tests/workers/test_cancel.py and tests/workers/test_failed_turns.py, through a worker)."""

from __future__ import annotations

from core.extensions import db, get_redis
from core.models import ToolCall
from core.turn import queued
from core.turn.state import key
from tests.support.turns import stored_turn
from workers.toolcalls import take_and_run


def stored_call(app, turn_id: str) -> None:
    with app.app_context():
        db.session.add(
            ToolCall(turn_id=turn_id, call_id="c1", step=0, position=0, name="echo", input={})
        )
        db.session.commit()


def test_a_call_of_a_turn_stopped_before_it_started_is_stored_cancelled_and_not_run(app, make_user):
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    stored_call(app, turn_id)
    with app.app_context():
        get_redis().set(key(turn_id, "cancel"), "1")
    with app.app_context():
        assert take_and_run(turn_id, "c1", "task-1") == "cancelled"
    with app.app_context():
        call = db.session.get(ToolCall, (turn_id, "c1"))
        assert (call.outcome, call.error) == (
            "cancelled",
            "The turn was cancelled before this call started.",
        )
        assert call.output is None
        # The step after it still runs: it closes the turn with the calls' results.
        assert queued.all_queued(turn_id, [queued.step_work(1)])
