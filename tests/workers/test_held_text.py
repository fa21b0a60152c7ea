"""Streamed text held for the watcher: every stream's batch in one round trip, one turn's failure
kept from the others and from the cancel check, one stream's batches sent from its own thread."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from core.turn import events
from core.turn.state import TurnState, key, load_pipelined_scripts
from tools.api import Signal
from workers import watch
from workers.streaming import DeltaBuffer
from workers.watch import TurnWatcher


@pytest.fixture
def client(redis_url):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


def quiet_watcher(client) -> TurnWatcher:
    """A watcher whose threads wait an hour between sends and between reads of the flags, so
    that only the test's ``send_once`` publishes and its ``check_once`` reads the flags. The
    server has the scripts already: the text thread loads them as it starts, and a first send
    racing that load lost some batches."""
    load_pipelined_scripts(client)
    return TurnWatcher(client, text_seconds=3600, fallback_seconds=3600)


def held(state: TurnState, *args) -> DeltaBuffer:
    """A stream's buffer whose text is never late: only the watcher's send or a flush sends it."""
    return DeltaBuffer(state, *args, late_seconds=3600)


def new_turn(client) -> TurnState:
    return TurnState(client, uuid.uuid4().hex)


def texts(state: TurnState) -> list[tuple[str, str]]:
    return [(name, data.get("text", "")) for _id, name, data in state.read()]


def test_one_send_publishes_every_streams_text_and_a_check_trips_a_cancelled_turn(client):
    watcher = quiet_watcher(client)
    first, second = new_turn(client), new_turn(client)
    thoughts, answer, other = (
        held(first, events.reasoning_event),
        held(first),
        held(second),
    )
    with (
        watcher.holding(thoughts),
        watcher.holding(answer),
        watcher.holding(other),
        watcher.watching(second.turn_id, Signal()) as watched,
    ):
        thoughts.add("Hmm, ")
        thoughts.add("let me see.")
        answer.add("Hello")
        answer.add(" there")
        other.add("Bye")
        client.set(key(second.turn_id, "cancel"), "1")
        watcher.send_once()
        watcher.check_once()
        assert watched.cancelled
        answer.add(".")
        answer.flush()
    assert texts(first) == [
        (events.REASONING_DELTA, "Hmm, let me see."),
        (events.TEXT_DELTA, "Hello there"),
        (events.TEXT_DELTA, "."),
    ]
    assert texts(second) == [(events.TEXT_DELTA, "Bye")]


def test_an_ended_turns_text_stops_neither_anothers_nor_the_cancel_check(client):
    watcher = quiet_watcher(client)
    ended, running = new_turn(client), new_turn(client)
    ended.end(60)
    late, live = held(ended), held(running)
    with (
        watcher.holding(late),
        watcher.holding(live),
        watcher.watching(running.turn_id, Signal()) as signal,
    ):
        late.add("too late")
        live.add("still here")
        client.set(key(running.turn_id, "cancel"), "1")
        watcher.send_once()
        watcher.check_once()
        assert signal.cancelled
    assert texts(ended) == []
    assert texts(running) == [(events.TEXT_DELTA, "still here")]
    assert late.pending == [] and live.pending == []


def test_text_a_restarted_redis_refuses_goes_with_the_next_send(client, monkeypatch):
    """A server that lost its scripts answers the pipeline's EVALSHA with NoScriptError: the
    text stays held, the script is loaded, and the next send sends it once."""
    loaded = threading.Event()

    def load_then_say(connection):
        load_pipelined_scripts(connection)
        loaded.set()

    # The text thread loads the scripts as it starts: the server loses them after that, as a
    # restart would (flushed before, the thread's load raced the flush and sent the first batch).
    monkeypatch.setattr(watch, "load_pipelined_scripts", load_then_say)
    watcher = quiet_watcher(client)
    state = new_turn(client)
    buffer = held(state)
    with watcher.holding(buffer):
        assert loaded.wait(30), "the text thread did not start"
        client.script_flush()
        buffer.add("kept ")
        watcher.send_once()
        buffer.add("for later")
        watcher.send_once()
    assert texts(state) == [(events.TEXT_DELTA, "kept for later")]


def test_text_the_watcher_is_late_for_goes_with_the_streams_next_text(client):
    """Regression: a watcher starved on a busy machine held a stream's text, and another turn's
    answer stalled 1.02 s in tests/workers/test_hostile_turns.py; the stream's thread now sends
    text that waited ``late_seconds`` itself, and leaves text the watcher is sending alone."""
    watcher = quiet_watcher(client)
    state = new_turn(client)
    buffer = DeltaBuffer(state, late_seconds=0)
    with watcher.holding(buffer):
        buffer.add("Hello")
        assert texts(state) == []  # the first text waits for the watcher
        buffer.add(" there")
        assert texts(state) == [(events.TEXT_DELTA, "Hello there")] and buffer.pending == []
        buffer.add("!")
        with buffer._lock:  # the watcher's batch in flight: it sends the text, not the stream
            buffer.add(" Bye.")
        assert texts(state) == [(events.TEXT_DELTA, "Hello there")]
        watcher.send_once()
    assert texts(state) == [(events.TEXT_DELTA, "Hello there"), (events.TEXT_DELTA, "! Bye.")]


def threads(name: str) -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name == name}


def wake_ups(thread: threading.Thread) -> int:
    """Return how often ``thread`` has gone to sleep and woken so far (its voluntary context
    switches)."""
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("voluntary_ctxt")]
    return int(line.split()[1])


def test_one_streams_batches_go_from_its_own_thread_and_never_wake_the_text_thread(client):
    """Regression: every batch of a lone stream woke the text thread, which waited out its
    pause and then Redis's answer: three wake-ups a batch, half a streamed token's CPU. A
    stream read a batch apart now sends each batch as it reads it, and reads Redis's answer
    with its next send."""
    watcher = TurnWatcher(client)
    state = new_turn(client)
    buffer = DeltaBuffer(state, held=watcher.text_held)
    reads = 10
    others = threads("text-publish")  # the earlier tests' watchers'
    try:
        with watcher.holding(buffer):
            (sender,) = threads("text-publish") - others
            buffer.add("0")  # sent at once, on this thread: the text thread sleeps on
            wait_for_sleep(sender)
            client.config_resetstat()
            before, stream_before = wake_ups(sender), wake_ups(threading.current_thread())
            for read in range(1, reads):
                time.sleep(watcher.text_seconds)  # the provider's pause between two reads
                buffer.add(f" {read}")  # a read's tokens, joined
                assert buffer.taken == 1, "the batch waited for another thread"
            assert wake_ups(sender) == before
            # A wake-up a read, its pause's: none more for Redis's answers, read each with
            # the next send, by then arrived.
            assert wake_ups(threading.current_thread()) - stream_before < 2 * (reads - 1)
            buffer.flush()  # reads the last send's answers
            assert buffer.pending == [] and buffer.taken == 0
            assert commands(client).get("evalsha") == reads - 1
    finally:
        watcher.close()
    assert texts(state) == [(events.TEXT_DELTA, "0")] + [
        (events.TEXT_DELTA, f" {read}") for read in range(1, reads)
    ]


def wait_for_sleep(thread: threading.Thread) -> None:
    """Wait until ``thread`` sleeps with no wake-up for a while (it started, loaded the scripts
    and went idle); AssertionError when it never stays asleep that long within 6 s."""
    first = seen = wake_ups(thread)
    still = 0
    for _ in range(300):
        time.sleep(0.02)
        now = wake_ups(thread)
        still = still + 1 if now == seen else 0
        if still >= 5:
            return
        seen = now
    raise AssertionError(
        f"{thread.name} never slept 0.1 s in 6 s: it woke {seen - first} times meanwhile"
    )


def commands(client: redis.Redis) -> dict[str, int]:
    """Return the calls of each command the server ran since its stats were reset."""
    calls: dict[str, int] = {}
    for name, entry in client.info("commandstats").items():
        command = name.removeprefix("cmdstat_").partition("|")[0]
        calls[command] = calls.get(command, 0) + entry["calls"]
    return calls


def test_a_flush_reads_the_answers_of_another_streams_send_in_flight(client):
    """A stream's send leaves its answers unread until the next send: a flush of a buffer it
    took reads them, and neither waits for the other nor loses or repeats text."""
    watcher = quiet_watcher(client)
    first, second = new_turn(client), new_turn(client)
    mine, other = DeltaBuffer(first, held=watcher.text_held), held(second)
    others = threads("text-publish")
    with watcher.holding(mine), watcher.holding(other):
        (sender,) = threads("text-publish") - others
        wait_for_sleep(sender)  # the scripts loaded: a stream's thread may send
        other.add("Hello")  # held, not sent: that stream's thread calls no watcher
        mine.add("Hi")  # this stream's send takes both and leaves them in flight
        assert (mine.taken, other.taken) == (1, 1)
        other.add(" there")
        other.flush()
        assert (mine.pending, mine.taken, other.pending, other.taken) == ([], 0, [], 0)
    assert texts(first) == [(events.TEXT_DELTA, "Hi")]
    assert texts(second) == [(events.TEXT_DELTA, "Hello"), (events.TEXT_DELTA, " there")]


def test_text_a_stream_could_not_send_while_redis_was_down_goes_with_its_flush(client):
    """Regression (this branch, before it merged): a stream's send that found Redis down kept
    the locks it took on the texts, so the turn's flush waited for good and a Redis restart
    left the turn running."""
    with socket.socket() as probe:  # a port nothing listens on: Redis, down
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # No retries: the text thread's load of the scripts fails at once and it goes idle.
    down = redis.Redis(port=port, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
    watcher = TurnWatcher(down)
    state = new_turn(client)  # the turn's own client, up again for the flush
    buffer = DeltaBuffer(state, held=watcher.text_held)
    others = threads("text-publish")
    try:
        with watcher.holding(buffer):
            (sender,) = threads("text-publish") - others
            wait_for_sleep(sender)  # its load of the scripts failed: streams may send
            buffer.add("kept")
            assert (buffer.pending, buffer.taken) == (["kept"], 0)
            buffer.flush()
    finally:
        watcher.close()
    assert texts(state) == [(events.TEXT_DELTA, "kept")]


def test_text_sent_after_the_server_closed_the_watchers_connection_goes_at_once(client):
    """The watcher keeps one connection for its sends: one the server closed since (a restart,
    a client kill) is made anew before the next send, as the pool did, so that send's text is
    published, not held for a later one."""
    watcher = quiet_watcher(client)
    state = new_turn(client)
    buffer = held(state)
    with watcher.holding(buffer):
        buffer.add("Hello")
        watcher.send_once()
        client.client_kill_filter(skipme=True, _type="normal")
        buffer.add(" again")
        watcher.send_once()
        assert buffer.pending == []
    watcher.close()
    assert texts(state) == [(events.TEXT_DELTA, "Hello"), (events.TEXT_DELTA, " again")]
