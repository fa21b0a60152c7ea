"""The turn watcher: a heartbeat that waits on the database holds up neither cancels nor
streamed text, and one that fails is logged and tried again."""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
import redis

from core.turn import events
from core.turn.state import TurnState, key
from tools.api import Signal
from workers.streaming import DeltaBuffer
from workers.watch import TurnWatcher

WAIT = 30  # seconds before a test gives up on what must happen (it happens within a poll)


@pytest.fixture
def client(redis_url):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


class Beats:
    """A heartbeat callback that records its calls; the first ``blocked`` calls wait for
    ``release`` (a database that waits), the first ``failing`` ones raise (one that refuses)."""

    def __init__(self, blocked: int = 0, failing: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.blocked, self.failing = blocked, failing
        self.entered = threading.Event()
        self.release = threading.Event()
        self.more = threading.Condition()

    def __call__(self, turn_ids: list[str]) -> None:
        with self.more:
            self.calls.append(list(turn_ids))
            self.more.notify_all()
        self.entered.set()
        if len(self.calls) <= self.blocked:
            self.release.wait()
        if len(self.calls) <= self.failing:
            raise RuntimeError("database is locked")

    def wait_for(self, count: int = 1, since: int = 0, turn_ids: list[str] | None = None) -> None:
        """Wait until ``count`` calls came after the first ``since``, or one with ``turn_ids``."""

        def came() -> bool:
            calls = self.calls[since:]
            return turn_ids in calls if turn_ids is not None else len(calls) >= count

        with self.more:
            assert self.more.wait_for(came, WAIT), self.calls


def test_a_heartbeat_waiting_on_the_database_holds_up_no_cancel_and_no_text(client):
    """Regression: the heartbeat ran on the poll's thread, so one waiting on SQLite's lock held
    every cancel and every stream's text in the process (a 0.85 s stall in
    tests/workers/test_hostile_turns.py)."""
    beats = Beats(blocked=1)
    watcher = TurnWatcher(client, beat=beats, beat_seconds=0.01)
    state = TurnState(client, uuid.uuid4().hex)
    text = DeltaBuffer(state, held=watcher.text_held)
    try:
        with watcher.watching(state.turn_id, Signal()) as signal, watcher.holding(text):
            assert beats.entered.wait(WAIT)  # the beat now waits for the database
            text.add("Hello")
            shown = state.read(block_ms=WAIT * 1000)
            assert [(name, data) for _id, name, data in shown] == [
                (events.TEXT_DELTA, {"text": "Hello"})
            ], "the text was held while the beat waited"
            client.set(key(state.turn_id, "cancel"), "1")
            assert signal.wait(WAIT), "the cancel did not reach the turn while the beat waited"
            assert len(beats.calls) == 1
            beats.release.set()
            beats.wait_for(2)  # and the beats go on once the database answers
        assert beats.calls[:2] == [[state.turn_id], [state.turn_id]]
    finally:
        beats.release.set()
        watcher.close()
        client.delete(key(state.turn_id, "cancel"), key(state.turn_id, "events"))


def test_a_heartbeat_that_fails_is_logged_and_tried_again(client, caplog):
    beats = Beats(failing=1)
    watcher = TurnWatcher(client, beat=beats, beat_seconds=0.01)
    turn_id = uuid.uuid4().hex
    try:
        with caplog.at_level(logging.WARNING, "lookout.workers"):
            with watcher.watching(turn_id, Signal()):
                beats.wait_for(2)
        assert beats.calls[:2] == [[turn_id], [turn_id]]
        assert "the heartbeat could not be written; retrying" in caplog.messages
    finally:
        watcher.close()


def test_no_heartbeat_names_a_turn_no_longer_watched(client):
    """Regression (of the test): it took the first beat as the one naming both turns, and on a
    busy machine the first beat came before the second turn was registered and named the first
    alone. It waits for the beats it asserts instead; the beats are one thread's, in order."""
    beats = Beats()
    watcher = TurnWatcher(client, beat=beats, beat_seconds=0.01)
    first, second = uuid.uuid4().hex, uuid.uuid4().hex
    try:
        with watcher.watching(first, Signal()):
            with watcher.watching(second, Signal()):
                beats.wait_for(turn_ids=[first, second])  # a beat names every turn watched
            ended = len(beats.calls)
            # A beat that read the turns before the second ended may still come; the first one
            # naming the first turn alone read them after, and so does every beat after it.
            beats.wait_for(since=ended, turn_ids=[first])
            alone = ended + beats.calls[ended:].index([first])
            beats.wait_for(since=alone + 1)
        assert all(turn_ids == [first] for turn_ids in beats.calls[alone:]), beats.calls
    finally:
        watcher.close()
