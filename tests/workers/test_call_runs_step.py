"""The task of the tool call that ends its step last runs the next model step itself, rather
than sending it to the queue (workers/next_steps.py): a worker process with a scripted model
for the whole turn, real Redis and SQLite for the cases a worker rarely meets (a step held
elsewhere, a step that failed on the database, a task that died before claiming the step).
"""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy.exc import OperationalError

from core import broker
from core.extensions import db, get_redis
from core.models import ToolCall, Turn
from core.models.base import utcnow
from core.turn import queued
from core.turn.state import turn_state
from tests.support.fake_model import Reply
from tests.support.turns import stored_turn
from workers import next_steps
from workers.fanout import dispatch, send_step
from workers.next_steps import run_next_step
from workers.reaper import reap_stale_turns


def received_steps(worker) -> int:
    """How many step tasks the worker's log shows delivered."""
    pattern = rf"Task {re.escape(broker.RUN_TURN_STEP)}\[[^\]]+\] received"
    return len(re.findall(pattern, worker.log.read_text(errors="replace")))


def test_the_step_after_two_calls_runs_once_in_the_task_of_the_call_that_ended_last(
    chat, chat_worker, fake_model, model_ids
):
    fake_model.script(
        Reply.tool_calls([("echo", {"text": "a"}), ("echo", {"text": "b"})]), Reply.text("Both.")
    )
    steps_before = received_steps(chat_worker)
    turn = chat.run(chat.new_conversation(), "twice", model_ids[0], generation={"tools": ["echo"]})
    assert turn["status"] == "completed"
    parts = chat.reply(turn)["parts"]
    assert [p["outcome"] for p in parts if p["type"] == "tool-result"] == ["ok", "ok"]
    assert parts[-1] == {"type": "text", "text": "Both."}
    assert len(fake_model.chat_requests()) == 2
    # Only the first step went through the queue; the second ran in a call's task, once.
    assert received_steps(chat_worker) - steps_before == 1
    log = chat_worker.log.read_text(errors="replace")
    assert log.count(f"turn={turn['id']} step=1 ran in the task of tool call") == 1


def step_done_turn(app, owner_id: str, step: int = 0, beat_seconds_ago: float = 0) -> str:
    """Store a running turn at ``step`` whose one call of step 0 has its outcome."""
    turn_id = stored_turn(app, owner_id, "running", with_reply=True)
    with app.app_context():
        turn = db.session.get(Turn, turn_id)
        turn.step, turn.heartbeat_at = step, utcnow() - timedelta(seconds=beat_seconds_ago)
        db.session.add(
            ToolCall(
                turn_id=turn_id,
                call_id="c1",
                step=0,
                position=0,
                name="echo",
                input={},
                outcome="ok",
                started_at=utcnow(),
                finished_at=utcnow(),
            )  # fmt: skip
        )
        db.session.commit()
    return turn_id


def test_a_next_step_another_worker_holds_is_sent_to_the_queue_not_waited_for(app, make_user):
    """The step's claim finds it busy (a copy the reaper sent, or the step this task ran before
    a database failure, still beating): the call's task sends it, as before, and returns; the
    sent step's task waits on the claim, not the call's."""
    turn_id = step_done_turn(app, make_user("ana").id, step=1)
    with app.app_context():
        assert run_next_step(turn_id, 0, "c1") == "sent"
        assert queued.all_queued(turn_id, [queued.step_work(1)])
        assert run_next_step(turn_id, 0, "c1") is None  # sent once


def test_a_next_step_that_failed_on_the_database_runs_when_its_call_runs_again(
    app, make_user, monkeypatch
):
    """The task's run again after a database failure finds its call done; the step must not
    be taken for sent already (the turn's set of steps sent), or nothing would run it until
    the reaper failed the turn."""
    turn_id = step_done_turn(app, make_user("bo").id)
    ran: list[int] = []

    def step_that_fails_once(task, turn: str, step: int) -> str:
        ran.append(step)
        if len(ran) == 1:
            raise OperationalError("UPDATE turns", {}, Exception("database is locked"))
        return "done"

    monkeypatch.setattr(next_steps, "run_claimed_step", step_that_fails_once)
    with app.app_context():
        try:
            run_next_step(turn_id, 0, "c1")
        except OperationalError:
            pass
        else:
            raise AssertionError("the database failure was swallowed: the task would not retry")
        assert run_next_step(turn_id, 0, "c1") == "done"  # the task's run again
        assert run_next_step(turn_id, 0, "c1") is None  # another call's delivery: ran once
    assert ran == [1, 1]


def test_a_turn_whose_call_task_died_before_claiming_the_next_step_gets_the_step_sent(
    app, make_user
):
    """Every call done, the next step neither claimed nor queued, nothing beating: the reaper
    sends the step (it was never published, so no queued marker holds it back)."""
    turn_id = step_done_turn(app, make_user("cy").id, beat_seconds_ago=120)
    with app.app_context():
        assert reap_stale_turns(60, 600) == []
        assert queued.all_queued(turn_id, [queued.step_work(1)])
        assert db.session.get(Turn, turn_id).status == "running"


def subscribes() -> int:
    """How many SUBSCRIBE commands the test Redis has served."""
    return get_redis().info("commandstats").get("cmdstat_subscribe", {}).get("calls", 0)


def test_a_task_the_worker_sends_subscribes_it_to_no_result(app, make_user):
    """Regression: the worker's sends of tool calls and steps subscribed its Celery result
    consumer to each task's result channel (a SUBSCRIBE, and an UNSUBSCRIBE once the send's
    result object was collected), though neither task stores a result (the web's send of a
    first step had stopped doing so)."""
    turn_id = stored_turn(app, make_user("di").id, "running", with_reply=True)
    with app.app_context():
        before = subscribes()
        dispatch(turn_id, 0, ["c1", "c2"])
        send_step(turn_id, 1)
        assert len(turn_state(turn_id).task_ids()) == 3  # all three were published
        assert subscribes() == before
