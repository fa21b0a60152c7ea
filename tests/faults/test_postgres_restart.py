"""PostgreSQL restarted between two steps of a turn (a private server the test makes with
initdb, never the machine's): the tool call's result and the next step are stored, the turn
completes, and every part stored before the restart is still there; a database down for longer
than a task runs again is left to the reaper, and the turn still completes, or, when the task
had claimed its work, fails saying that the database stopped answering."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.conftest import skip_or_fail
from tests.faults.conftest import Follower, Stopwatch, record_recovery
from tests.faults.test_queue_wait import runs_of, start_waiting_turn
from tests.support import postgres_server
from tests.support.fake_model import Reply
from tests.support.processes import joined, wait_until
from tests.workers.test_failed_turns import reloaded, streamed_text, wait_for_text

GAVE_UP = (
    "The answer above was cut off. Lookout's database stopped answering before this turn "
    "finished. Send the message again; if this keeps happening, tell an administrator."
)


@pytest.fixture
def private_postgres():
    reason = postgres_server.missing_reason()
    if reason:
        skip_or_fail(f"{reason}, so a PostgreSQL restart was not tested")
    with postgres_server.PostgresServer() as server:
        yield server


@pytest.mark.postgres
def test_postgres_restarted_during_a_tool_call_keeps_every_part_and_the_turn_completes(
    private_postgres, make_stack
):
    """Regression: a tool call that read the database while it restarted failed its task, so
    the turn hung until the reaper failed it as if its worker had died."""
    # The reaper waits longer than the restart: the turn must finish on its own.
    stack = make_stack(DATABASE_URL=private_postgres.url, TURN_STALE_SECONDS=20)
    stack.worker()
    stack.fake.script(
        Reply.tool_calls([("nap", {"seconds": 1})], text="Resting first. "),
        Reply.text("Rested, and here is the answer."),
    )
    conversation = stack.chat.new_conversation()
    turn_id = stack.chat.start(conversation, "rest", "fake/m", generation={"tools": ["nap"]})[
        "turn"
    ]["id"]
    page = Follower(stack.chat, turn_id)
    page.start()
    page.wait_for_event("tool.started")
    # Down for longer than the call takes: its reads, or the storing of its result, fail.
    private_postgres.restart(down_seconds=2)
    clock = Stopwatch()
    turn = stack.chat.wait(turn_id)
    record_recovery(
        "PostgreSQL restarted (down 2 s) during a tool call: from back up to turn completed",
        clock.seconds(),
    )
    joined(page, "the page's event stream")
    assert turn["status"] == "completed", turn
    parts = stack.chat.reply(turn)["parts"]
    assert [p["type"] for p in parts] == ["text", "tool-call", "tool-result", "text"]
    assert parts[0]["text"] == "Resting first. "
    assert (parts[2]["outcome"], parts[2]["output"]) == ("ok", "Rested 1 s.")
    assert parts[3]["text"] == "Rested, and here is the answer."
    shown = stack.chat.conversation(conversation)
    assert shown["messages"][0]["parts"] == [{"type": "text", "text": "rest"}]
    assert page.events[-1].name == "turn.completed"
    assert page.text() == "Resting first. Rested, and here is the answer."


@pytest.mark.postgres
def test_a_tool_call_whose_database_stays_down_gives_up_and_the_reaper_sends_it_again(
    private_postgres, make_stack, tmp_path
):
    """Regression: a tool call's task ran again every 10 s for as long as the database was
    down (its bound was lifted so that it could wait for a call another task runs). Now it
    gives up after DATABASE_RETRY_SECONDS; its call, never claimed, is sent again by the
    reaper once the database answers, runs once, and the turn completes."""
    stack = make_stack(DATABASE_URL=private_postgres.url, DATABASE_RETRY_SECONDS=2)
    worker = stack.worker()
    runs = tmp_path / "runs.txt"
    conversation, turn_id, _reader = start_waiting_turn(stack, runs)
    # The call's task starts while the database is down, and cannot claim its call.
    outage_until_gave_up(private_postgres, worker, "run_tool_call", stack.resume_workers)
    clock = Stopwatch()
    turn = stack.chat.wait(turn_id)
    record_recovery(
        "PostgreSQL down 10 s with a tool call queued: from back up to turn completed",
        clock.seconds(),
    )
    assert turn["status"] == "completed", turn
    reply, _ = reloaded(stack.chat, conversation, turn_id)
    assert [p["type"] for p in reply["parts"]] == ["text", "tool-call", "tool-result", "text"]
    assert reply["parts"][3] == {"type": "text", "text": "Counted once."}
    assert runs_of(runs) == 1
    assert f"turn={turn_id} waits for work the queue lost" in worker.log.read_text()


@pytest.mark.postgres
def test_a_step_whose_database_stays_down_ends_its_turn_saying_the_database_stopped(
    private_postgres, make_stack
):
    """Regression: a step that claimed its work and then gave up on the database left its turn
    to the reaper, which failed it with "The worker answering this turn stopped before it
    finished." though no worker had stopped. The task leaves a note in Redis, and the reaper's
    ending names the database, keeping every word the page was shown."""
    stack = make_stack(
        DATABASE_URL=private_postgres.url,
        DATABASE_RETRY_SECONDS=2,
        TURN_STALE_SECONDS=3,
        REAPER_INTERVAL_SECONDS=1,
    )
    worker = stack.worker()
    release = threading.Event()
    answer = "Half an answer, and the rest of it."
    stack.fake.script(Reply.text(answer, chunks=2, pause_after=(1, 60), release=release))
    conversation, turn_id, reader = stack.start_turn("talk")
    wait_for_text(reader, "Half")
    # The answer ends while the database is down, and its step cannot store the ending.
    outage_until_gave_up(private_postgres, worker, "run_turn_step", release.set)
    clock = Stopwatch()
    turn = stack.chat.wait(turn_id)
    record_recovery(
        "PostgreSQL down 10 s as a step ended: from back up to turn failed", clock.seconds()
    )
    joined(reader, "the event stream")
    assert (turn["status"], turn["error"]) == ("failed", GAVE_UP)
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    assert streamed_text(reader) == answer
    assert reply["parts"] == [{"type": "text", "text": answer}]
    assert failure["error"] == GAVE_UP
    assert [e.name for e in reader.events][-1] == "turn.failed"
    assert reader.events[-1].data["error"] == GAVE_UP
    stack.fake.script(Reply.text("Here again."))
    assert stack.chat.run(conversation, "again?", "fake/m")["status"] == "completed"


def outage_until_gave_up(private_postgres, worker, task: str, then) -> None:
    """Stop PostgreSQL for 10 s, call ``then`` once it is down, and return when ``task`` has
    given up on the database and the database answers again."""
    outage = threading.Thread(target=private_postgres.restart, kwargs={"down_seconds": 10})
    outage.start()
    wait_until(lambda: not answers(private_postgres.port), 10, "PostgreSQL never stopped")
    then()
    wait_until(lambda: task in gave_up(worker), 20, f"{task} never gave up; see {worker.log}")
    outage.join()


def answers(port: int) -> bool:
    """Whether something accepts connections on the loopback port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    except OSError:
        return False
    return True


def gave_up(worker) -> str:
    """The worker's log lines that say a task gave up on the database."""
    lines = worker.log.read_text(errors="replace").splitlines()
    return "\n".join(line for line in lines if "gives up: the database" in line)
