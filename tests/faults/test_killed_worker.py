"""A worker killed with SIGKILL during a tool call: another worker's reaper ends the turn,
keeping everything the user saw, and the conversation takes its next message at once.

A worker killed during a model stream is tests/faults/test_redelivery.py, where Redis also
redelivers the step."""

from __future__ import annotations

import pytest

from core import broker
from tests.faults.conftest import Stopwatch, record_recovery
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, joined
from tests.workers.test_failed_turns import reloaded

DIED = "The worker answering this turn stopped before it finished."


def assert_next_turn_completes(stack, conversation: str) -> None:
    stack.fake.script(Reply.text("Back again."))
    turn = stack.chat.run(conversation, "still there?", "fake/m")
    assert turn["status"] == "completed", turn
    assert stack.chat.reply(turn)["parts"] == [{"type": "text", "text": "Back again."}]


@pytest.mark.slow
def test_a_worker_killed_during_a_tool_call_fails_the_turn_keeping_the_text_and_the_call(
    make_stack,
):
    stack = make_stack()
    stack.fake.script(Reply.tool_calls([("waiter", {})], text="Let me wait. "))
    workers = stack.start_workers(2)
    conversation, turn_id, reader = stack.start_turn("wait", tools=("waiter",))
    reader.wait_for("tool.started")
    # The other worker's reaper notices the dead worker's turn.
    doomed = next(w for w in workers if stack.received(w, broker.RUN_TOOL_CALL))
    clock = Stopwatch()
    stack.kill(doomed)
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    record_recovery("worker SIGKILLed during a tool call (reaped)", clock.seconds())
    joined(reader, "the event stream")
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    assert turn["status"] == "failed" and reply["status"] == "failed"
    assert DIED in turn["error"] and failure["error"] == turn["error"]
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result"]
    assert reply["parts"][0] == {"type": "text", "text": "Let me wait. "}
    assert reply["parts"][2]["outcome"] == "cancelled"
    assert reader.events[-1].name == "turn.failed"
    assert stack.chat.conversation(conversation)["messages"][0]["parts"] == [
        {"type": "text", "text": "wait"}
    ]
    assert_next_turn_completes(stack, conversation)


def test_a_step_that_starts_slowly_is_not_taken_for_a_dead_worker(make_stack):
    """Regression: a turn beat only while its model streamed or a tool ran, so a step that
    took longer than TURN_STALE_SECONDS to start (here a plugin loading for 5 s) was failed
    by the reaper as if its worker had died."""
    stack = make_stack(LOOKOUT_PLUGINS="tests.workers.turn_plugins,tests.faults.slow_plugin")
    stack.worker()
    stack.fake.script(Reply.text("Started at last."))
    turn = stack.chat.run(stack.chat.new_conversation(), "hello", "fake/m")
    assert turn["status"] == "completed", turn
    assert stack.chat.reply(turn)["parts"] == [{"type": "text", "text": "Started at last."}]
