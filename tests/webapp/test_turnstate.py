"""A turn's Redis state: nothing written after the turn ended outlives it (issue 10)."""

from __future__ import annotations

import uuid

import pytest
import redis

from core.turn.state import SAFETY_TTL_SECONDS, TurnState, key


@pytest.fixture
def state(redis_url) -> TurnState:
    return TurnState(redis.Redis.from_url(redis_url), f"t-{uuid.uuid4().hex}")


def test_events_get_the_safety_expiry_once_and_never_push_out_a_shorter_one(state):
    state.publish("turn.started")
    assert state.client.ttl(key(state.turn_id, "events")) > SAFETY_TTL_SECONDS - 10
    state.client.expire(key(state.turn_id, "events"), 600)
    state.publish("text.delta", {"text": "hi"})
    assert state.client.ttl(key(state.turn_id, "events")) <= 600


def test_an_event_published_after_the_turn_ended_is_dropped_and_keeps_the_expiry(state):
    """Regression: late events of a finished turn pushed its stream's expiry out to 24 h."""
    state.publish("turn.started")
    state.publish("turn.completed")
    state.end(stream_ttl_seconds=600)
    assert state.publish("tool.finished", {"callId": "late"}) is None
    assert [name for _, name, _ in state.read()] == ["turn.started", "turn.completed"]
    assert 0 < state.client.ttl(key(state.turn_id, "events")) <= 600


def test_a_turn_cache_write_after_the_turn_ended_is_dropped(state):
    """Regression: a tool that finished late recreated the deleted cache with a 24 h expiry."""
    cache = state.cache("web_fetch")
    cache["https://a.example/"] = {"text": "kept during the turn"}
    assert cache["https://a.example/"] == {"text": "kept during the turn"}
    state.end(stream_ttl_seconds=600)
    assert not state.exists("cache")
    cache["https://b.example/"] = {"text": "too late"}
    assert not state.exists("cache")
    assert "https://b.example/" not in cache


def test_a_citation_claimed_after_the_turn_ended_is_refused(state):
    def cite(url):
        return state.cite("source.added", [(url, {"url": url, "title": None})])

    assert cite("https://a.example/") == [True]
    assert cite("https://a.example/") == [False]
    assert [data["url"] for _, _, data in state.read()] == ["https://a.example/"]
    state.end(stream_ttl_seconds=600)
    assert cite("https://b.example/") is None
    assert not state.exists("cited")


def test_a_task_recorded_after_the_turn_ended_does_not_bring_back_its_task_list(state):
    """Regression: a Stop's revoked tasks (or a late callback) published after the end
    recreated the deleted task list for a day."""
    state.remember_task("step-0")
    assert state.task_ids() == ["step-0"]
    assert 0 < state.client.ttl(key(state.turn_id, "tasks")) <= SAFETY_TTL_SECONDS
    state.end(stream_ttl_seconds=600)
    state.remember_task("late-callback")
    assert not state.exists("tasks") and state.task_ids() == []


def test_a_queued_task_records_its_marker_and_its_id_together_until_the_turn_ends(state):
    """A published task's queued marker and its id (for a Stop to revoke) were two round trips;
    one script now sets both, each with the safety expiry, and neither once the turn ended."""
    state.queue("step:0", "task-0")
    assert state.task_ids() == ["task-0"]
    assert state.client.smembers(key(state.turn_id, "queued")) == {b"step:0"}
    for name in ("tasks", "queued"):
        assert 0 < state.client.ttl(key(state.turn_id, name)) <= SAFETY_TTL_SECONDS
    state.end(stream_ttl_seconds=600)
    state.queue("step:1", "late-callback")
    assert not state.exists("tasks") and not state.exists("queued")


def test_the_turns_end_deletes_the_note_that_its_task_gave_up_on_the_database(state):
    """The note was made outside the module that names the turn's keys, and outlived the turn."""
    state.client.set(key(state.turn_id, "database_gave_up"), "1700000000.0")
    state.end(stream_ttl_seconds=600)
    assert not state.exists("database_gave_up")


def test_a_turn_key_that_is_not_named_in_the_state_module_is_refused(state):
    with pytest.raises(ValueError, match="name it in core/turn/state.py"):
        key(state.turn_id, "scratch")


def test_events_are_still_published_after_redis_forgot_its_scripts(state):
    """A restarted Redis knows none of the scripts a worker loaded before: each is loaded
    again, and the ended marker still drops a late event."""
    state.publish("turn.started")
    state.client.script_flush()
    state.publish("text.delta", {"text": "hi"})
    state.end(stream_ttl_seconds=600)
    state.client.script_flush()
    assert state.publish("text.delta", {"text": "late"}) is None
    assert [name for _, name, _ in state.read()] == ["turn.started", "text.delta"]
