"""The queued markers: a step or tool-call task published marks its work until it starts, so
the reaper can tell work waiting in the queue from work the queue lost."""

from __future__ import annotations

import uuid

import redis

from core import broker
from core.extensions import get_redis
from core.turn import queued
from core.turn.state import key, turn_state
from webapp import queue


def test_a_published_step_or_call_is_queued_until_its_task_starts(app):
    turn_id = uuid.uuid4().hex
    step, call = queued.step_work(0), queued.call_work("c1")
    with app.app_context():  # no worker takes this app's queue: the tasks stay in it
        queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0)
        queue.enqueue(broker.RUN_TOOL_CALL, turn_id, "c1")
        assert queued.all_queued(turn_id, [step, call])
        assert not queued.all_queued(turn_id, [queued.step_work(1)])  # never sent
        queued.mark_left(turn_id, step)
        assert not queued.all_queued(turn_id, [step, call])
        assert queued.all_queued(turn_id, [call])


def test_a_published_step_or_call_records_its_task_id_for_a_stop_to_revoke(app):
    """Each sender recorded its task's id apart, a round trip more than the marker's; the
    publish now records both at once, and a publish after the end records neither."""
    turn_id = uuid.uuid4().hex
    with app.app_context():
        step_task = queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0)
        call_task = queue.enqueue(broker.RUN_TOOL_CALL, turn_id, "c1")
        assert sorted(turn_state(turn_id).task_ids()) == sorted([step_task, call_task])
        turn_state(turn_id).end(60, cancelled=True)
        queue.enqueue(broker.RUN_TURN_STEP, turn_id, 1)
        assert turn_state(turn_id).task_ids() == []


def test_a_turns_end_deletes_its_markers_and_a_later_publish_marks_nothing(app):
    """Regression: a Stop revoked the turn's queued tasks, which workers drop unrun, so their
    markers stayed for a day; and a publish after the end (a late callback) marked anew."""
    turn_id = uuid.uuid4().hex
    with app.app_context():
        queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0)
        turn_state(turn_id).end(60, cancelled=True)
        assert not get_redis().exists(key(turn_id, "queued"))
        queue.enqueue(broker.RUN_TURN_STEP, turn_id, 1)
        assert not queued.all_queued(turn_id, [queued.step_work(1)])
        assert not get_redis().exists(key(turn_id, "queued"))


def test_the_markers_live_in_the_redis_that_holds_the_queue(app):
    """A Redis that loses its queue (a restart without persistence) loses the markers too."""
    turn_id = uuid.uuid4().hex
    with app.app_context():
        queue.enqueue(broker.RUN_TOOL_CALL, turn_id, "c1")
        broker_redis = redis.Redis.from_url(queue.get_client().conf.broker_url)
        queue_name = app.config["CELERY_QUEUE"]
        assert broker_redis.llen(queue_name) == 1
        assert broker_redis.sismember(f"lookout:turn:{turn_id}:queued", "call:c1")


def test_only_step_and_tool_call_tasks_are_work_of_a_turn():
    assert queued.work_of(broker.RUN_TURN_STEP, ["t", 2]) == ("t", "step:2")
    assert queued.work_of(broker.RUN_TOOL_CALL, ["t", "c"]) == ("t", "call:c")
    assert queued.work_of(broker.PING, []) is None
    assert queued.work_of(broker.PROBE_PROVIDER, ["p"]) is None
