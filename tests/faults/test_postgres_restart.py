"""PostgreSQL restarted between two steps of a turn (a private server the test makes with
initdb, never the machine's): the tool call's result and the next step are stored, the turn
completes, and every part stored before the restart is still there."""

from __future__ import annotations

import pytest

from tests.conftest import skip_or_fail
from tests.faults.conftest import Follower, Stopwatch, record_recovery
from tests.support import postgres_server
from tests.support.fake_model import Reply


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
    turn = stack.chat.wait(turn_id, timeout=30)
    record_recovery(
        "PostgreSQL restarted (down 2 s) during a tool call: from back up to turn completed",
        clock.seconds(),
    )
    page.join(10)
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
