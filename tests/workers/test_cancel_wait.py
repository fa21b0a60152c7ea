"""The cancel watcher waits for cancels on one subscriber connection rather than polling the
flags: a cancel published trips its turn's signal, one whose message was lost is read at the
fallback or after a reconnect, an idle watcher sends Redis nothing, and held text still goes out.

Each test has a private redis-server, so that the subscribers and commands counted are the
watcher's alone."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from core.turn import events
from core.turn.state import CANCEL_CHANNEL, TurnState, key, raise_cancel
from tests.support.processes import wait_until
from tests.support.redis_server import RedisServer
from tools.api import Signal
from workers.streaming import DeltaBuffer
from workers.watch import TurnWatcher

WAIT = 30  # seconds before a test gives up on what must happen
NEVER = 3600  # a fallback read that does not come while a test runs


@pytest.fixture
def client():
    with RedisServer() as server:
        connection = redis.Redis.from_url(server.url)
        yield connection
        connection.close()


def commands(client: redis.Redis) -> dict[str, int]:
    """Return the calls of each command the server ran since its stats were reset (Redis 7
    counts a subcommand apart, as ``config|resetstat``: here it counts as its command's)."""
    calls: dict[str, int] = {}
    for name, entry in client.info("commandstats").items():
        command = name.removeprefix("cmdstat_").partition("|")[0]
        calls[command] = calls.get(command, 0) + entry["calls"]
    return calls


def subscribed(client: redis.Redis, watcher: TurnWatcher) -> None:
    """Wait until the watcher's cancel thread subscribed and read the flags after it.

    Counting two MGETs (registration, subscription) raced: the thread may also read once
    before its subscription is confirmed, and the read after it then came later, into an idle
    test's count. A cancel published for a probe turn reaches the thread after the
    confirmation, in the subscriber's stream, so its signal trips after that read."""
    probe = f"probe-{uuid.uuid4().hex}"
    with watcher.watching(probe, Signal()) as signal:
        wait_until(
            lambda: client.pubsub_numsub(CANCEL_CHANNEL)[0][1] == 1,
            WAIT,
            "the watcher did not subscribe",
        )
        client.publish(CANCEL_CHANNEL, probe)
        assert signal.wait(WAIT), "the watcher did not read its subscription"


def test_a_cancel_published_trips_its_turns_signal_and_no_other(client):
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    cancelled, running = TurnState(client, uuid.uuid4().hex), uuid.uuid4().hex
    try:
        with (
            watcher.watching(cancelled.turn_id, Signal()) as signal,
            watcher.watching(running, Signal()) as other,
        ):
            subscribed(client, watcher)
            cancelled.end(60, cancelled=True)  # as core.turn.lifecycle.finish_turn does
            assert signal.wait(WAIT), "the published cancel did not reach the turn"
            assert not other.cancelled
    finally:
        watcher.close()


def test_an_mcp_calls_cancel_is_published_as_a_turns(client):
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    call_id = f"mcp-{uuid.uuid4().hex}"
    try:
        with watcher.watching(call_id, Signal()) as signal:
            subscribed(client, watcher)
            pipe = client.pipeline(transaction=False)
            raise_cancel(pipe, call_id, 60)  # as webapp.mcp.calls.request_cancel does
            pipe.execute()
            assert signal.wait(WAIT)
    finally:
        watcher.close()


def test_a_cancel_whose_message_was_lost_is_read_at_the_fallback(client):
    watcher = TurnWatcher(client, fallback_seconds=0.2)
    turn_id = uuid.uuid4().hex
    try:
        with watcher.watching(turn_id, Signal()) as signal:
            subscribed(client, watcher)
            client.set(key(turn_id, "cancel"), "1")  # raised, never published
            assert signal.wait(WAIT), "the fallback read did not trip the turn"
    finally:
        watcher.close()


def test_a_cancel_raised_while_the_subscriber_was_cut_off_is_read_when_it_reconnects(client):
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    turn_id = uuid.uuid4().hex
    try:
        with watcher.watching(turn_id, Signal()) as signal:
            subscribed(client, watcher)
            client.set(key(turn_id, "cancel"), "1")  # the message lost with the connection
            client.client_kill_filter(_type="pubsub")
            assert signal.wait(WAIT), "the read after the reconnect did not trip the turn"
            assert client.pubsub_numsub(CANCEL_CHANNEL)[0][1] == 1
    finally:
        watcher.close()


def test_a_turn_watched_already_is_not_read_again_and_its_later_signal_knows_a_cancel(client):
    """Issue 29: each step registered twice (for its beats, then for its stream), each time
    reading every watched flag: a round trip a step that told the watcher nothing new. A
    signal added to a turn watched already is not read for; one added after the turn's cancel
    came is tripped as it is added."""
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    turn = TurnState(client, uuid.uuid4().hex)
    try:
        with watcher.watching(turn.turn_id, Signal()) as step:
            subscribed(client, watcher)
            client.config_resetstat()
            with watcher.watching(turn.turn_id, Signal()) as stream:
                assert not stream.cancelled
            assert "mget" not in commands(client), commands(client)
            turn.end(60, cancelled=True)  # the Stop, published
            assert step.wait(WAIT), "the published cancel did not reach the turn"
            with watcher.watching(turn.turn_id, Signal()) as later:
                assert later.cancelled  # at once: no read, no message to wait for
            assert "mget" not in commands(client), commands(client)
        # Unwatched, the turn is read for again when it is next watched (its next step).
        with watcher.watching(turn.turn_id, Signal()) as next_step:
            assert next_step.cancelled  # its flag, read
        assert commands(client)["mget"] == 1
    finally:
        watcher.close()


def test_an_idle_watcher_sends_redis_nothing_between_fallback_reads(client):
    """Regression: the watcher read the flags every 100 ms, two wake-ups and a round trip each,
    most of a text turn's worker CPU outside its step."""
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    turn_id = uuid.uuid4().hex
    try:
        with watcher.watching(turn_id, Signal()) as signal:
            subscribed(client, watcher)
            client.config_resetstat()
            time.sleep(1.0)  # ten polls of the old watcher
            assert set(commands(client)) <= {"config", "info"}, commands(client)
            assert not signal.cancelled
    finally:
        watcher.close()


def test_held_text_is_published_and_again_after_the_text_thread_slept(client):
    watcher = TurnWatcher(client, fallback_seconds=NEVER)
    state = TurnState(client, uuid.uuid4().hex)
    text = DeltaBuffer(state, held=watcher.text_held, late_seconds=NEVER)
    try:
        with watcher.watching(state.turn_id, Signal()), watcher.holding(text):
            text.add("Hello")
            first = state.read(block_ms=WAIT * 1000)
            assert [(name, data) for _id, name, data in first] == [
                (events.TEXT_DELTA, {"text": "Hello"})
            ]
            wait_until(lambda: not text.pending, WAIT, "the text stayed held")
            text.add(" again")  # none held meanwhile: the text thread slept until now
            again = state.read(after=first[-1][0], block_ms=WAIT * 1000)
            assert [(name, data) for _id, name, data in again] == [
                (events.TEXT_DELTA, {"text": " again"})
            ]
    finally:
        watcher.close()
