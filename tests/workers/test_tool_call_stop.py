"""A tool call's task watches its turn for a Stop once: the watcher's signal, read as the task
takes the turn on, says whether the turn was stopped before the call started, and stops the
tool while it runs (real Redis and SQLite; the tool itself is stopped in
tests/workers/test_cancel.py and tests/workers/test_failed_turns.py, through a worker)."""

from __future__ import annotations

import redis.connection

from core.extensions import db, get_redis
from core.models import ToolCall
from core.turn import queued
from core.turn.events import TOOL_FINISHED, TOOL_STARTED
from core.turn.state import key, turn_state
from tests.support.turns import stored_turn
from workers.toolcalls import take_and_run


def stored_call(app, turn_id: str) -> None:
    with app.app_context():
        db.session.add(
            ToolCall(turn_id=turn_id, call_id="c1", step=0, position=0, name="echo", input={})
        )
        db.session.commit()


def test_a_call_of_a_turn_stopped_before_it_started_is_stored_cancelled_and_not_run(app, make_user):
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    stored_call(app, turn_id)
    with app.app_context():
        get_redis().set(key(turn_id, "cancel"), "1")
    with app.app_context():
        assert take_and_run(turn_id, "c1", "task-1") == "cancelled"
    with app.app_context():
        call = db.session.get(ToolCall, (turn_id, "c1"))
        assert (call.outcome, call.error) == (
            "cancelled",
            "The turn was cancelled before this call started.",
        )
        assert call.output is None
        # The step after it still runs: it closes the turn with the calls' results.
        assert queued.all_queued(turn_id, [queued.step_work(1)])


class Sends:
    """What this process sends Redis, one entry a round trip (a command, a script's run, or a
    pipeline's commands together)."""

    def __init__(self, monkeypatch) -> None:
        self.sent: list[bytes] = []
        send = redis.connection.AbstractConnection.send_packed_command

        def recorded(connection, command, check_health=True):
            self.sent.append(command if isinstance(command, bytes) else b"".join(command))
            return send(connection, command, check_health)

        monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", recorded)

    def with_event(self, name: str) -> list[bytes]:
        return [sent for sent in self.sent if name.encode() in sent]


def test_a_calls_start_is_published_in_the_round_trip_that_reads_the_stop(
    app, make_user, monkeypatch
):
    """Issue 29: the call's task read the turn's cancel flag in a round trip, then published
    ``tool.started`` in another."""
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    stored_call(app, turn_id)
    with app.app_context():
        get_redis().ping()  # the connection made before the count
        sends = Sends(monkeypatch)
        assert take_and_run(turn_id, "c1", "task-1") == "error"  # echo was not offered
        [started] = sends.with_event(TOOL_STARTED)
        assert b"MGET" in started and key(turn_id, "cancel").encode() in started
        assert [name for _id, name, _data in turn_state(turn_id).read()][:2] == [
            TOOL_STARTED,
            TOOL_FINISHED,
        ]


def test_a_call_of_a_turn_that_ended_stopped_publishes_no_start(app, make_user):
    """A Stop raises the flag with the turn's end: the flag read and the start's publish in one
    round trip still publish no ``tool.started``, and the call is stored cancelled."""
    turn_id = stored_turn(app, make_user("pat").id, "running", with_reply=True)
    stored_call(app, turn_id)
    with app.app_context():
        turn_state(turn_id).end(stream_ttl_seconds=600, cancelled=True)
        assert take_and_run(turn_id, "c1", "task-1") == "cancelled"
        assert TOOL_STARTED not in [name for _id, name, _data in turn_state(turn_id).read()]
        call = db.session.get(ToolCall, (turn_id, "c1"))
        assert call.error == "The turn was cancelled before this call started."
