"""A step's next step is sent by the tool call that leaves none of the step's calls without an
outcome (real Redis and SQLite; the queued marker shows what was published).

The calls went out as a Celery chord, whose callback was the next step; the chord stored each
call's result in Redis and counted them there, which nobody read. tests/workers/test_turns.py
runs turns of one and of two calls through a worker, tests/faults/test_queue_wait.py a call
delivered twice and the next step waiting in the queue, tests/workers/test_cancel.py a Stop
during a call, tests/faults/test_killed_worker.py a worker killed during one.
"""

from __future__ import annotations

from core.extensions import db
from core.models import ToolCall
from core.turn import queued
from core.turn.calls import take_call
from core.turn.state import turn_state
from tests.support.turns import stored_turn
from workers.fanout import send_next_step


def store_calls(app, turn_id: str, step: int, call_ids: list[str]) -> None:
    with app.app_context():
        for position, call_id in enumerate(call_ids):
            db.session.add(
                ToolCall(
                    turn_id=turn_id,
                    call_id=call_id,
                    step=step,
                    position=position,
                    name="echo",
                    input={},
                )  # fmt: skip
            )
        db.session.commit()


def finish(app, turn_id: str, call_id: str) -> None:
    with app.app_context():
        db.session.get(ToolCall, (turn_id, call_id)).outcome = "ok"
        db.session.commit()


def test_only_the_call_that_leaves_no_call_of_its_step_unfinished_sends_the_next_step(
    app, make_user
):
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    store_calls(app, turn_id, 0, ["c1", "c2"])
    store_calls(app, turn_id, 1, ["c3"])  # a later step's call does not hold step 0 back
    next_step = [queued.step_work(1)]
    finish(app, turn_id, "c1")
    with app.app_context():
        assert not send_next_step(turn_id, 0)  # c2 has no outcome yet
        assert not queued.all_queued(turn_id, next_step)
    finish(app, turn_id, "c2")
    with app.app_context():
        assert send_next_step(turn_id, 0)
        assert queued.all_queued(turn_id, next_step)


def test_a_call_delivered_again_after_its_outcome_is_told_done_with_its_step(app, make_user):
    """A delivery of a call that has its outcome (a step taken over sends all its calls again)
    needs the call's step to send the next step, as the call that stored the last outcome
    would have, had its worker not stopped first."""
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    store_calls(app, turn_id, 2, ["c1"])
    with app.app_context():
        claim, call, turn = take_call(turn_id, "c1", "task-1")
        assert (claim, call.step, turn.status) == ("claimed", 2, "running")
        db.session.commit()
    finish(app, turn_id, "c1")
    with app.app_context():
        claim, call, turn = take_call(turn_id, "c1", "task-2")
        assert (claim, call.step, turn) == ("done", 2, None)
        db.session.rollback()
        assert send_next_step(turn_id, 2)
        assert queued.all_queued(turn_id, [queued.step_work(3)])


def test_of_two_calls_that_find_every_call_done_one_sends_the_next_step(app, make_user):
    """Two calls ending at once both read the other's outcome after their commits: the step
    goes out once (a second copy would wait on the step's claim while the first runs)."""
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    store_calls(app, turn_id, 0, ["c1", "c2"])
    finish(app, turn_id, "c1")
    finish(app, turn_id, "c2")
    with app.app_context():
        sent = [send_next_step(turn_id, 0), send_next_step(turn_id, 0)]
        assert sent == [True, False]
        assert queued.all_queued(turn_id, [queued.step_work(1)])


def test_after_a_stop_the_next_step_is_sent_to_show_the_calls_results(app, make_user):
    """A cancelled turn's next step derives its reply again with the results of the calls the
    Stop interrupted (``close_cancelled``, once by its own claim): it goes out whenever a call
    of the step ends, and the set of steps sent, deleted at the end, is not made again."""
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    store_calls(app, turn_id, 0, ["c1"])
    finish(app, turn_id, "c1")
    with app.app_context():
        turn_state(turn_id).end(60, cancelled=True)
        assert [send_next_step(turn_id, 0), send_next_step(turn_id, 0)] == [True, True]
        assert not turn_state(turn_id).exists("sent")
