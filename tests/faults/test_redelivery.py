"""Redis's redelivery of a dead worker's step and the reaper agree, whichever comes first.

A worker killed mid-stream leaves its step unacknowledged; Redis hands it to another worker
after ``visibility_timeout`` (here seconds, in production half an hour), while the reaper fails
the turn once its heartbeat is ``TURN_STALE_SECONDS`` old. Either way the turn ends failed once,
the text the page showed is stored once, and no ``text.delta`` is published again.
"""

from __future__ import annotations

import pytest

from core import broker
from tests.faults.conftest import Stopwatch, record_recovery
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, joined, wait_until
from tests.workers.test_failed_turns import reloaded, streamed_text, wait_for_text

DIED = "The worker answering this turn stopped before it finished."
ORDERS = {
    # the reaper fails the turn within about 4 s; Redis redelivers the step after 7 s
    "reaper-first": ({"REAPER_INTERVAL_SECONDS": 1}, 7),
    # no reaper runs during the test; Redis redelivers the step after 3 s
    "redelivery-first": ({"REAPER_INTERVAL_SECONDS": 3600}, 3),
}


@pytest.mark.slow
@pytest.mark.parametrize("order", ORDERS)
def test_a_redelivered_step_and_the_reaper_end_the_turn_once_without_repeating_text(
    make_stack, order
):
    settings, visibility_seconds = ORDERS[order]
    stack = make_stack(TURN_STALE_SECONDS=3, **settings)
    overrides = {
        "broker_transport_options": {
            "visibility_timeout": visibility_seconds,
            "unacked_restore_interval": 0.5,
            "unacked_restore_throttle": 1,
            # A worker killed while it held the restore lock keeps it for this long.
            "unacked_mutex_expire": 1,
        }
    }
    workers = stack.start_workers(2, overrides)
    stack.fake.script(Reply.forever("word ", delay=0.05), Reply.text("A second answer."))
    conversation, turn_id, reader = stack.start_turn("talk")
    wait_for_text(reader, "word word word")
    doomed = next(w for w in workers if stack.received(w, broker.RUN_TURN_STEP))
    survivor = next(w for w in workers if w is not doomed)
    clock = Stopwatch()
    stack.kill(doomed)
    wait_until(
        lambda: stack.received(survivor, broker.RUN_TURN_STEP),
        visibility_seconds + 10,
        f"Redis did not redeliver the step; see {survivor.log}",
    )
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    record_recovery(f"worker SIGKILLed mid-stream, {order}", clock.seconds())
    # Anything the redelivered step would publish or store has come once its run has ended.
    wait_until(
        lambda: (
            stack.ended(survivor, broker.RUN_TURN_STEP)
            >= stack.received(survivor, broker.RUN_TURN_STEP)
        ),
        HANG_SECONDS,
        f"the redelivered step never ended; see {survivor.log}",
    )
    joined(reader, "the event stream")
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    assert stack.chat.turn(turn_id)["status"] == "failed"
    assert DIED in turn["error"] and failure["error"] == turn["error"]
    shown = streamed_text(reader)
    assert shown.startswith("word word word") and "A second answer." not in shown
    assert reply["parts"] == [{"type": "text", "text": shown}]
    assert [e.name for e in reader.events].count("turn.failed") == 1
    assert reader.events[-1].name == "turn.failed"
    reread = stack.chat.events(turn_id)  # a page reconnecting now reads each delta once
    assert "".join(e.data["text"] for e in reread if e.name == "text.delta") == shown
    assert len(stack.fake.chat_requests()) == 1  # the step was not asked of the model again
