"""A turn's task that the worker drops unrun leaves no queued marker behind.

The marker says a task waits in the queue, so the reaper leaves its work alone; a task that
never runs must not keep saying so. The workers stop taking tasks (``Stack.pause_workers``)
so that a turn's first step waits in the queue while the test cancels or revokes it.
"""

from __future__ import annotations

import redis

from core import broker
from core.extensions import get_redis
from core.turn.state import key, turn_state
from tests.faults.conftest import Stack
from tests.faults.test_queue_wait import LEFT_TO_WAIT
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, joined, wait_until
from tests.support.workers import CeleryWorker
from webapp import queue


def markers(stack: Stack, turn_id: str) -> set[str]:
    """Return the turn's queued markers."""
    with stack.app.app_context():
        return {m.decode() for m in get_redis().smembers(key(turn_id, "queued"))}


def discarded(worker: CeleryWorker) -> int:
    """How many revoked steps the worker's log shows dropped unrun."""
    dropped = f"Discarding revoked task: {broker.RUN_TURN_STEP}["
    return worker.log.read_text(errors="replace").count(dropped)


def test_a_turn_cancelled_while_its_first_step_waits_leaves_no_marker_and_is_not_sent_again(
    make_stack,
):
    """Regression: a Stop revoked the waiting first step, which the worker then dropped unrun,
    so the step's queued marker stayed in Redis for a day (its safety expiry)."""
    stack = make_stack(TURN_STALE_SECONDS=3, REAPER_INTERVAL_SECONDS=1)
    worker = stack.worker()
    stack.fake.script(Reply.text("Here."))
    stack.pause_workers()
    _, cancelled, reader = stack.start_turn("never mind")
    _, waiting, _ = stack.start_turn("anyone there?")  # shows when the reaper has judged both
    assert markers(stack, cancelled) == {"step:0"}
    response = stack.chat.call("POST", f"/api/turns/{cancelled}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    joined(reader, "the event stream")
    assert reader.events[-1].name == "turn.cancelled"
    assert markers(stack, cancelled) == set()
    judged = f"turn={waiting} {LEFT_TO_WAIT}"
    wait_until(
        lambda: judged in worker.log.read_text(errors="replace"),
        20,
        f"the reaper never judged the waiting turn; see {worker.log}",
    )
    stack.resume_workers()
    assert stack.chat.wait(waiting)["status"] == "completed"
    wait_until(lambda: discarded(worker) == 1, 10, f"the Stop's revoke never came: {worker.log}")
    assert stack.chat.turn(cancelled)["status"] == "cancelled"
    assert markers(stack, cancelled) == set()
    assert f"turn={cancelled}" not in worker.log.read_text(errors="replace")  # not judged
    assert Stack.received(worker, broker.RUN_TURN_STEP) == 2  # one for each turn
    assert len(stack.fake.chat_requests()) == 1


def waiting_turn(make_stack):
    """Start a turn whose first step waits in the queue of paused workers; the model will
    answer "Still here." and the reaper looks every second."""
    stack = make_stack(TURN_STALE_SECONDS=3, TURN_QUEUE_WAIT_SECONDS=20, REAPER_INTERVAL_SECONDS=1)
    worker = stack.worker()
    stack.fake.script(Reply.text("Still here."))
    stack.pause_workers()
    conversation, turn_id, reader = stack.start_turn("anyone there?")
    return stack, worker, conversation, turn_id, reader


def test_a_waiting_step_revoked_unrun_is_sent_again_by_the_reaper_and_answers(make_stack):
    """A step's task dropped unrun while its turn is open (an operator's revoke, an expiry)
    used to leave its marker, so the reaper took the step for waiting in the queue and failed
    the turn as too busy after TURN_QUEUE_WAIT_SECONDS; its work is lost, and sent again."""
    stack, worker, conversation, turn_id, reader = waiting_turn(make_stack)
    with stack.app.app_context():
        (task_id,) = turn_state(turn_id).task_ids()
        client = queue.get_client()
        with client.connection_for_write() as connection:
            client.control.revoke(task_id, connection=connection)
    stack.resume_workers()
    wait_until(lambda: discarded(worker) == 1, 10, f"the revoke never came: {worker.log}")
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    assert turn["status"] == "completed", turn
    assert reader.events[-1].name == "turn.completed"
    shown = stack.chat.conversation(conversation)
    assert shown["messages"][-1]["parts"] == [{"type": "text", "text": "Still here."}]
    assert f"turn={turn_id} waits for work the queue lost: step 0 sent again" in (
        worker.log.read_text(errors="replace")
    )
    assert markers(stack, turn_id) == set()


def test_a_waiting_step_the_worker_cannot_read_is_sent_again_by_the_reaper_and_answers(
    make_stack,
):
    """The same for a step's message the worker rejects unrun (one it cannot read: here its
    ETA is not a date), the only one left for the step after the queue lost the first."""
    stack, worker, conversation, turn_id, reader = waiting_turn(make_stack)
    with stack.app.app_context():
        broker_redis = redis.Redis.from_url(stack.app.config["REDIS_URL"])
        name = stack.app.config["CELERY_QUEUE"]
        # A read the worker began before its pause may take the step and put it back.
        wait_until(lambda: broker_redis.llen(name) == 1, 10, "the step never came back")
        assert broker_redis.delete(name) == 1  # the queue lost it
        queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0, eta="not a date")
    assert markers(stack, turn_id) == {"step:0"}
    stack.resume_workers()
    wait_until(
        lambda: "Received invalid task message" in worker.log.read_text(errors="replace"),
        10,
        f"the worker never rejected the message: {worker.log}",
    )
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    assert turn["status"] == "completed", turn
    shown = stack.chat.conversation(conversation)
    assert shown["messages"][-1]["parts"] == [{"type": "text", "text": "Still here."}]
    assert markers(stack, turn_id) == set()
