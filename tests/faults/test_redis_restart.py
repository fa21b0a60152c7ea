"""Redis restarted under a running turn (a private redis-server that, like ./run's, keeps
nothing on disk): the turn goes on, its text is stored whole, a page following it reconnects
and reads every word once, and the next message is answered."""

from __future__ import annotations

import pytest

from tests.faults.conftest import Follower, Stopwatch, record_recovery
from tests.faults.test_queue_wait import runs_of, start_waiting_turn
from tests.support.fake_model import Reply
from tests.support.processes import joined, wait_until
from tests.support.redis_server import RedisServer
from tests.workers.test_failed_turns import reloaded

ANSWER = "One two three four five six seven eight nine ten. " * 4
# Bounds that only a hang reaches: recovery takes 2-4 s here (recorded, not asserted), but a
# busy machine stretches the reaper's sweep and the worker's start (20 s ran out once at load 5).
HANG_SECONDS = 120


@pytest.fixture
def private_redis():
    with RedisServer() as server:
        yield server


def test_redis_restarted_mid_stream_keeps_the_turn_its_text_and_its_worker(
    private_redis, make_stack
):
    """Regression: the worker running a turn exited ("Unrecoverable error" in kombu's Redis
    transport), and a text delta Redis refused failed the turn with "Something went wrong",
    losing every word."""
    stack = make_stack(REDIS_URL=private_redis.url)
    worker = stack.worker()
    stack.fake.script(Reply.text(ANSWER, chunks=40, delay=0.06))
    conversation = stack.chat.new_conversation()
    turn_id = stack.chat.start(conversation, "count", "fake/m")["turn"]["id"]
    page = Follower(stack.chat, turn_id)
    page.start()
    page.wait_for_text("One two three four")
    clock = Stopwatch()
    private_redis.restart(down_seconds=1)
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    ended = clock.seconds()
    joined(page, "the page's event stream")
    stack.fake.script(Reply.text("Back."))
    after = stack.chat.run(conversation, "again", "fake/m")
    record_recovery("Redis restarted (down 1 s) mid-stream: the turn ended", ended)
    record_recovery("Redis restarted (down 1 s): the next turn answered", clock.seconds())
    assert turn["status"] == "completed", turn
    assert stack.chat.reply(turn)["parts"] == [{"type": "text", "text": ANSWER}]
    assert page.events[-1].name == "turn.completed" and page.connections > 1
    assert page.text() == ANSWER
    assert after["status"] == "completed", after
    assert worker.process.poll() is None, worker.log.read_text()


def test_a_turn_whose_queued_task_redis_lost_is_answered_after_the_stale_limit(
    private_redis, make_stack
):
    """Regression: a turn queued when Redis restarted stayed "queued" for good, and its
    conversation refused every next message with 409 until the user cancelled it."""
    stack = make_stack(REDIS_URL=private_redis.url)
    stack.fake.script(Reply.text("Answered after all."))
    conversation = stack.chat.new_conversation()
    turn_id = stack.chat.start(conversation, "anyone?", "fake/m")["turn"]["id"]
    clock = Stopwatch()
    private_redis.restart()  # no worker had taken the task yet: it is gone
    stack.worker()
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    record_recovery("Redis restarted with a turn queued: the turn answered", clock.seconds())
    assert turn["status"] == "completed", turn
    assert stack.chat.reply(turn)["parts"] == [{"type": "text", "text": "Answered after all."}]
    assert len(stack.fake.chat_requests()) == 1


def test_a_tool_call_whose_waiting_task_redis_lost_is_sent_again_and_runs_once(
    private_redis, make_stack, tmp_path
):
    """The reaper leaves alone work whose task waits in the queue, and knows it waits by a
    marker kept in the same Redis: a restart that loses the call's task loses its marker too,
    so the reaper sends the call again; it runs once and the turn completes."""
    stack = make_stack(REDIS_URL=private_redis.url)
    worker = stack.worker()
    runs = tmp_path / "runs.txt"
    conversation, turn_id, _reader = start_waiting_turn(stack, runs)
    clock = Stopwatch()
    private_redis.restart()  # the call's task, waiting for a free worker, is gone
    wait_until(
        lambda: f"turn={turn_id} waits for work the queue lost" in worker.log.read_text(),
        HANG_SECONDS,
        f"the reaper never sent the lost call again; see {worker.log}",
    )
    stack.resume_workers()
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    record_recovery("Redis restarted with a tool call queued: the turn answered", clock.seconds())
    assert turn["status"] == "completed", turn
    reply, _ = reloaded(stack.chat, conversation, turn_id)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result", "text"]
    assert reply["parts"][3] == {"type": "text", "text": "Counted once."}
    assert runs_of(runs) == 1
