"""A turn's Redis ending (``TurnState.end``, which every ending of a turn makes once): one
command the worker sends (issue 29), and what it leaves for the page, the watchers and the
turn's late work."""

from __future__ import annotations

import re
import uuid

import pytest
import redis
import redis.connection

from core.turn.state import (
    _END_KEYS,
    CANCEL_CHANNEL,
    KEY_NAMES,
    SAFETY_TTL_SECONDS,
    TurnState,
    key,
)


@pytest.fixture
def state(redis_url) -> TurnState:
    return TurnState(redis.Redis.from_url(redis_url), f"t-{uuid.uuid4().hex}")


def commands_sent(monkeypatch) -> list[bytes]:
    """Collect the name of each command a Redis connection sends from here on."""
    sent: list[bytes] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def spy(self, command, *args, **kwargs):
        packed = b"\r\n" + (b"".join(command) if isinstance(command, list) else command)
        sent.extend(re.findall(rb"(?<=\r\n)\*\d+\r\n\$\d+\r\n([A-Z]+)\r\n", packed))
        return send(self, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", spy)
    return sent


def test_the_ending_is_one_command_and_leaves_the_last_event_and_the_expiries(state, monkeypatch):
    """Issue 29: the ending was a MULTI/EXEC of six commands, each packed and its answer
    parsed by the worker (1.6 times the CPU of one script's call)."""
    state.publish("turn.started")
    for name in ("cache", "tasks", "cited", "queued", "database_gave_up", "sent"):
        state.client.set(key(state.turn_id, name), "x")
    state.client.script_load("return 1")  # the connection made before counting
    sent = commands_sent(monkeypatch)
    state.end(600, event=("turn.completed", {"status": "completed", "error": None}))
    monkeypatch.undo()
    assert sent in ([b"EVALSHA"], [b"EVALSHA", b"SCRIPT", b"EVALSHA"])  # a new server: loaded
    events = state.read()
    assert [(name, data) for _, name, data in events] == [
        ("turn.started", {}),
        ("turn.completed", {"status": "completed", "error": None}),
    ]
    assert 0 < state.client.ttl(key(state.turn_id, "events")) <= 600
    assert state.client.ttl(key(state.turn_id, "ended")) > SAFETY_TTL_SECONDS - 10
    for name in ("cache", "tasks", "cited", "queued", "database_gave_up", "sent"):
        assert not state.exists(name)
    assert not state.exists("cancel")
    assert state.publish("text.delta", {"text": "late"}) is None


def test_a_cancelled_ending_raises_the_flag_and_wakes_the_watchers(state):
    watchers = state.client.pubsub()
    watchers.subscribe(CANCEL_CHANNEL)
    assert watchers.get_message(timeout=5)["type"] == "subscribe"
    state.end(600, cancelled=True, event=("turn.cancelled", {"status": "cancelled"}))
    message = watchers.get_message(timeout=5)
    watchers.close()
    assert message["data"] == state.turn_id.encode()
    assert state.cancel_requested()
    assert 0 < state.client.ttl(key(state.turn_id, "cancel")) <= 600
    assert [name for _, name, _ in state.read()] == ["turn.cancelled"]


def test_an_ending_without_an_event_appends_none(state):
    state.publish("turn.started")
    state.end(600)
    assert [name for _, name, _ in state.read()] == ["turn.started"]
    assert state.exists("ended")


def test_the_ending_reads_every_key_of_a_turn():
    """A key added to a turn's state is deleted or expired by its ending (see ``key``)."""
    assert sorted(_END_KEYS) == sorted(KEY_NAMES)
