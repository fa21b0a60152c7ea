"""A turn whose next task waits in a backed-up queue is not a dead worker's turn.

Nothing beats for a turn while its tool calls wait for a free worker, so its heartbeat goes
stale; the reaper used to fail it as if its worker had died (the 500-user load run lost 36–86
turns so). Here the workers stop taking tasks (``Stack.pause_workers``) just before a step sends
its calls, which then wait in the queue as long as the test likes, while the reaper runs.
"""

from __future__ import annotations

from pathlib import Path

from core import broker
from core.extensions import db
from core.models import ToolCall
from core.turn.lifecycle import OPEN_STATUSES
from tests.faults.conftest import Stack, Stopwatch, record_recovery
from tests.faults.test_killed_worker import assert_next_turn_completes
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, joined, wait_until
from tests.support.workers import CeleryWorker
from tests.workers.test_cancel import EventReader
from tests.workers.test_failed_turns import reloaded
from webapp import queue

LEFT_TO_WAIT = "waits in the queue for step"
BUSY = "The server was too busy to answer this message in time. Send it again in a few minutes."


def start_waiting_turn(stack: Stack, runs: Path) -> tuple[str, str, EventReader]:
    """Start a turn whose step says a few words and asks for one ``tally`` call, and stop the
    workers taking tasks before the call is sent; return (conversation, turn id, its reader)
    once the call is stored and waits in the queue."""
    stack.fake.script(
        Reply.tool_calls([("tally", {"text": str(runs)})], text="Let me count. ", silence=2),
        Reply.text("Counted once."),
    )
    conversation, turn_id, reader = stack.start_turn("count", tools=("tally",))
    reader.wait_for("text.delta")
    stack.pause_workers()  # the step streams on; its calls will find no taker
    wait_until(lambda: stored_calls(stack, turn_id), 10, "the step never stored its call")
    return conversation, turn_id, reader


def wait_for_the_reaper(stack: Stack, worker: CeleryWorker, turn_id: str, says: str) -> None:
    """Wait until the worker's log says the reaper judged the turn (``says``), and check that
    it left the turn open (a queued turn is open too: the wait ends early only on its end)."""
    wait_until(
        lambda: (
            f"turn={turn_id} {says}" in worker.log.read_text(errors="replace")
            or stack.chat.turn(turn_id)["status"] not in OPEN_STATUSES
        ),
        20,
        f"the reaper never judged the waiting turn; see {worker.log}",
    )
    assert stack.chat.turn(turn_id)["status"] in OPEN_STATUSES


def stored_calls(stack: Stack, turn_id: str) -> list[ToolCall]:
    """Return the turn's stored tool calls."""
    with stack.app.app_context():
        calls = list(db.session.scalars(db.select(ToolCall).filter_by(turn_id=turn_id)))
        db.session.remove()
        return calls


def runs_of(runs: Path) -> int:
    """How many times the tally tool ran."""
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_tool_calls_waiting_in_the_queue_past_the_stale_limit_complete_once_taken(
    make_stack, tmp_path
):
    """Regression: the reaper failed a turn whose tool call waited for a free worker longer
    than TURN_STALE_SECONDS with "The worker answering this turn stopped before it
    finished", although no worker stopped. And then it sent the waiting call again, though
    its task was still in the queue: in the 120-user overload round such duplicates made
    about 60 % more tasks than the turns needed."""
    stack = make_stack(TURN_STALE_SECONDS=3, REAPER_INTERVAL_SECONDS=1)
    worker = stack.worker()
    runs = tmp_path / "runs.txt"
    conversation, turn_id, reader = start_waiting_turn(stack, runs)
    wait_for_the_reaper(stack, worker, turn_id, LEFT_TO_WAIT)
    assert all(c.started_at is None for c in stored_calls(stack, turn_id))
    clock = Stopwatch()
    stack.resume_workers()
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    record_recovery(
        "tool call waited past the stale limit: from a free worker to done", clock.seconds()
    )
    joined(reader, "the event stream")
    assert turn["status"] == "completed", turn
    reply, _ = reloaded(stack.chat, conversation, turn_id)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result", "text"]
    assert reply["parts"][2]["outcome"] == "ok"
    assert reply["parts"][3] == {"type": "text", "text": "Counted once."}
    assert runs_of(runs) == 1
    assert len(stack.fake.chat_requests()) == 2
    assert [e.name for e in reader.events].count("tool.started") == 1
    # Nothing was sent again: one task for the call, one for the first step (the call's task
    # runs the step after it).
    assert Stack.received(worker, broker.RUN_TOOL_CALL) == 1
    assert Stack.received(worker, broker.RUN_TURN_STEP) == 1


def test_the_step_after_a_tool_call_does_not_wait_in_a_paused_queue(make_stack):
    """The step after the tool calls used to be sent to the queue by the last call to end, and
    waited there behind other turns' work (the reaper left it to wait). The call's task now
    runs it itself: with the workers taking no task, the turn still completes, the step once."""
    stack = make_stack(TURN_STALE_SECONDS=3, REAPER_INTERVAL_SECONDS=1)
    worker = stack.worker()
    stack.fake.script(
        Reply.tool_calls([("nap", {"seconds": 3})], text="Resting first. "),
        Reply.text("Rested."),
    )
    conversation, turn_id, reader = stack.start_turn("rest", tools=("nap",))
    reader.wait_for("tool.started")
    stack.pause_workers()  # the call runs on; no task will be taken until the turn ends
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    assert turn["status"] == "completed", turn
    reply, _ = reloaded(stack.chat, conversation, turn_id)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result", "text"]
    assert reply["parts"][3] == {"type": "text", "text": "Rested."}
    assert len(stack.fake.chat_requests()) == 2
    assert [e.name for e in reader.events].count("turn.completed") == 1
    assert Stack.received(worker, broker.RUN_TURN_STEP) == 1  # the first step's only
    assert f"turn={turn_id} {LEFT_TO_WAIT}" not in worker.log.read_text(errors="replace")
    stack.resume_workers()


def test_a_tool_call_delivered_twice_at_once_runs_once(make_stack, tmp_path):
    """Regression: a tool call's task checked only that the call had no outcome yet, so two
    deliveries of it (the reaper sends a waiting turn's calls again) both ran the tool."""
    stack = make_stack(TURN_STALE_SECONDS=30)  # no reaper: the test sends the duplicate
    stack.worker()
    runs = tmp_path / "runs.txt"
    conversation, turn_id, reader = start_waiting_turn(stack, runs)
    (call,) = stored_calls(stack, turn_id)
    with stack.app.app_context():
        queue.enqueue(broker.RUN_TOOL_CALL, turn_id, call.call_id)
    stack.resume_workers()
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    assert turn["status"] == "completed", turn
    assert runs_of(runs) == 1
    reply, _ = reloaded(stack.chat, conversation, turn_id)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result", "text"]
    assert [e.name for e in reader.events].count("tool.started") == 1


def test_a_turn_waiting_longer_than_the_queue_limit_fails_as_too_busy_keeping_its_text(
    make_stack, tmp_path
):
    """A turn whose work waits in the queue past TURN_QUEUE_WAIT_SECONDS is failed with a
    sentence that says the server was busy (not that a worker died), keeping what it showed."""
    stack = make_stack(TURN_STALE_SECONDS=3, TURN_QUEUE_WAIT_SECONDS=6, REAPER_INTERVAL_SECONDS=1)
    stack.worker()
    runs = tmp_path / "runs.txt"
    conversation, turn_id, reader = start_waiting_turn(stack, runs)
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    assert turn["status"] == "failed" and reply["status"] == "failed"
    assert turn["error"] == f"The answer above was cut off. {BUSY}"
    assert failure["error"] == turn["error"]
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result"]
    assert reply["parts"][0] == {"type": "text", "text": "Let me count. "}
    assert reply["parts"][2]["outcome"] == "cancelled"
    assert reader.events[-1].name == "turn.failed"
    stack.fake.clear_script()
    stack.resume_workers()  # the call's tasks arrive after its turn ended: the tool never runs
    assert_next_turn_completes(stack, conversation)
    assert runs_of(runs) == 0


def test_a_queued_turn_whose_first_step_waits_past_the_queue_limit_fails_as_too_busy(make_stack):
    """Regression: a turn whose first step no worker took stayed "queued" for as long as the
    queue held it (the reaper only sent the step again, once), and its conversation answered
    409 to every next message meanwhile. Now it fails as too busy after
    TURN_QUEUE_WAIT_SECONDS, as a running turn does, keeping the user's message."""
    stack = make_stack(TURN_STALE_SECONDS=3, TURN_QUEUE_WAIT_SECONDS=6, REAPER_INTERVAL_SECONDS=1)
    worker = stack.worker()
    stack.pause_workers()
    conversation, turn_id, reader = stack.start_turn("anyone there?")
    wait_for_the_reaper(stack, worker, turn_id, LEFT_TO_WAIT)
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")
    assert (turn["status"], turn["error"]) == ("failed", BUSY), turn
    assert reader.events[-1].name == "turn.failed"
    assert reader.events[-1].data["error"] == BUSY
    shown = stack.chat.conversation(conversation)  # what the chat page draws
    (message,) = shown["messages"]
    assert (message["role"], message["parts"]) == (
        "user",
        [{"type": "text", "text": "anyone there?"}],
    )
    assert [(t["userMessageId"], t["error"]) for t in shown["failedTurns"]] == [
        (message["id"], BUSY)
    ]
    stack.resume_workers()  # its first step, taken now, finds the turn ended and does nothing
    assert_next_turn_completes(stack, conversation)
    assert len(stack.fake.chat_requests()) == 1
    assert Stack.received(worker, broker.RUN_TURN_STEP) == 2  # its first step was never resent
