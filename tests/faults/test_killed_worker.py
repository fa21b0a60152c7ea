"""A worker killed with SIGKILL mid-turn: another worker's reaper ends the turn, keeping
everything the user saw, and the conversation takes its next message at once."""

from __future__ import annotations

import pytest

from tests.faults.conftest import Stopwatch, record_recovery
from tests.support.fake_model import Reply
from tests.workers.test_cancel import EventReader
from tests.workers.test_failed_turns import reloaded, streamed_text, wait_for_text

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
    doomed = stack.worker()
    conversation = stack.chat.new_conversation()
    started = stack.chat.start(conversation, "wait", "fake/m", generation={"tools": ["waiter"]})
    turn_id = started["turn"]["id"]
    reader = EventReader(stack.chat, turn_id)
    reader.start()
    reader.wait_for("tool.started")
    stack.worker()  # the survivor, whose reaper notices the dead worker's turn
    clock = Stopwatch()
    stack.kill(doomed)
    turn = stack.chat.wait(turn_id, timeout=30)
    record_recovery("worker SIGKILLed during a tool call (reaped)", clock.seconds())
    reader.join(5)
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


@pytest.mark.slow
def test_a_worker_killed_during_a_model_stream_fails_the_turn_keeping_every_word_shown(
    make_stack,
):
    stack = make_stack()
    stack.fake.script(Reply.forever("word ", delay=0.05))
    doomed = stack.worker()
    conversation = stack.chat.new_conversation()
    turn_id = stack.chat.start(conversation, "talk", "fake/m")["turn"]["id"]
    reader = EventReader(stack.chat, turn_id)
    reader.start()
    wait_for_text(reader, "word word word")
    stack.worker()
    clock = Stopwatch()
    stack.kill(doomed)
    turn = stack.chat.wait(turn_id, timeout=30)
    record_recovery("worker SIGKILLed during a model stream (reaped)", clock.seconds())
    reader.join(5)
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    assert turn["status"] == "failed" and DIED in turn["error"]
    assert failure["error"] == turn["error"]
    shown = streamed_text(reader)
    assert shown.startswith("word word word")
    assert reply["parts"] == [{"type": "text", "text": shown}]
    assert_next_turn_completes(stack, conversation)
