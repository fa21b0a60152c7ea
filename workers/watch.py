"""Two threads per worker process: one trips the signals of cancelled turns and publishes the
text their models stream, one beats for the turns watched.

Every running step and tool call registers its Signal under its turn; the poll thread reads all
their cancel flags with one MGET every 100 ms, so a cancel reaches work within that time
however many turns run, and a tool blocked in a read is woken by ``Signal.on_cancel``.

A model stream's text waits in its ``HeldText`` (``workers.streaming.DeltaBuffer``), registered
with ``holding``: each poll publishes every stream's held text in the same pipeline as the MGET,
so a process makes one round trip a poll however many turns stream (a round trip each batch
each stream was most of a streamed token's CPU). While any stream holds text the watcher
polls ``text_seconds`` (``TEXT_BATCH_SECONDS``) after its last poll, else ``poll_seconds``; a
stream whose text was all sent wakes it with ``text_held`` when it holds text again.

Every ``beat_seconds`` the beat thread calls ``beat`` with the turns watched: work that is
registered is alive, however long its model or tool stays silent, and a dead process stops
beating. The beat writes to the database, which may wait (SQLite's lock, a slow PostgreSQL), so
it has a thread of its own: a waiting beat never delays a cancel or a stream's text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import redis
from redis.client import Pipeline
from redis.exceptions import NoScriptError

from core.turn.state import key, load_pipelined_scripts
from tools.api import Signal

POLL_SECONDS = 0.1
# How often a model's streamed text is shown: the poll's pause while a stream holds text. Also
# the least time between two reads of a model's stream (``workers.runtime.provider_client``):
# tokens that come sooner wait in the socket for the next read, which takes them all with one
# wake-up, not one each.
TEXT_BATCH_SECONDS = 0.05
log = logging.getLogger("lookout.workers")


class HeldText(Protocol):
    """Text a stream holds for the watcher's next poll to publish."""

    pending: list[str]  # what is held; empty when all was sent

    def queue(self, pipe: Pipeline) -> bool:
        """Queue one publish of the held text in ``pipe``; False when there is none to send.
        After True, ``settle`` is called once with that publish's answer."""

    def settle(self, answer: Any) -> None:
        """Take the answer of the publish queued (an entry id, None, or the error)."""


class TurnWatcher:
    """Watches the turns this worker holds: trips registered signals when their turn's cancel
    flag goes up, and beats for them (``beat``) so the reaper sees them alive."""

    def __init__(
        self,
        client: redis.Redis,
        beat: Callable[[list[str]], None] | None = None,
        beat_seconds: float = 5.0,
        text_seconds: float = TEXT_BATCH_SECONDS,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.client = client
        self.beat = beat
        self.beat_seconds = beat_seconds
        self.text_seconds = text_seconds
        self.poll_seconds = poll_seconds
        self._signals: dict[str, set[Signal]] = {}
        self._held: dict[HeldText, None] = {}  # in the order registered: a turn's reasoning first
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._beater: threading.Thread | None = None

    @contextmanager
    def watching(self, turn_id: str, signal: Signal) -> Iterator[Signal]:
        """Trip ``signal`` if the turn is cancelled while the block runs."""
        with self._lock:
            self._signals.setdefault(turn_id, set()).add(signal)
            self._thread = started(self._thread, self._run, "cancel-watch")
            if self.beat is not None:
                self._beater = started(self._beater, self._beat_forever, "turn-beat")
        self.check_once()
        try:
            yield signal
        finally:
            with self._lock:
                signals = self._signals.get(turn_id)
                if signals is not None:
                    signals.discard(signal)
                    if not signals:
                        del self._signals[turn_id]

    @contextmanager
    def holding(self, held: HeldText) -> Iterator[None]:
        """Publish ``held``'s text on every poll while the block runs."""
        with self._lock:
            self._held[held] = None
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(held, None)

    def text_held(self) -> None:
        """Say that a stream holds text again: the next poll comes ``text_seconds`` after the
        last, not ``poll_seconds``."""
        self._wake.set()

    def _pause(self) -> float:
        """Return how long the next poll waits after the last: the text batch while any
        stream holds text."""
        with self._lock:
            held = list(self._held)
        return self.text_seconds if any(text.pending for text in held) else self.poll_seconds

    def check_once(self) -> None:
        """Read every watched turn's flag once and trip the signals of cancelled turns."""
        with self._lock:
            turn_ids = list(self._signals)
        if turn_ids:
            self._trip(turn_ids, self.client.mget([key(t, "cancel") for t in turn_ids]))

    def poll_once(self) -> None:
        """In one round trip, read every watched turn's flag and publish every stream's held
        text; trip the signals of cancelled turns. A publish that fails (its turn ended, Redis
        refused it) holds that stream's text and leaves the others' and the flags alone."""
        with self._lock:
            turn_ids = list(self._signals)
            held = list(self._held)
        pipe = self.client.pipeline(transaction=False)
        if turn_ids:
            pipe.mget([key(turn_id, "cancel") for turn_id in turn_ids])
        queued = [text for text in held if text.queue(pipe)]
        answers: list[Any] = []
        try:
            if turn_ids or queued:
                answers = pipe.execute(raise_on_error=False)
        except Exception as exc:
            answers = [exc] * (len(queued) + bool(turn_ids))
            raise
        finally:
            published = answers[len(answers) - len(queued) :]
            for text, answer in zip(queued, published, strict=True):
                text.settle(answer)
        if any(isinstance(answer, NoScriptError) for answer in published):
            load_pipelined_scripts(self.client)  # a restarted server: the next poll sends it
        if turn_ids:
            flags = answers[0]
            if isinstance(flags, Exception):
                raise flags
            self._trip(turn_ids, flags)

    def _trip(self, turn_ids: list[str], flags: list[bytes | None]) -> None:
        for turn_id, flag in zip(turn_ids, flags, strict=True):
            if flag is None:
                continue
            with self._lock:
                signals = list(self._signals.get(turn_id, ()))
            for signal in signals:
                signal.cancel()

    def beat_once(self) -> None:
        """Call ``beat`` with the turns watched now, if any."""
        with self._lock:
            turn_ids = list(self._signals)
        if turn_ids and self.beat is not None:
            self.beat(turn_ids)

    def close(self) -> None:
        """Stop both threads once their current round is done (a worker's never are)."""
        self._closed.set()
        self._wake.set()

    def _run(self) -> None:
        try:
            load_pipelined_scripts(self.client)
        except redis.RedisError:
            pass  # the first poll's NoScriptError loads it
        last_poll = time.monotonic()
        while not self._closed.is_set():
            pause = last_poll + self._pause() - time.monotonic()
            if pause > 0 and self._wake.wait(pause):
                self._wake.clear()  # text held again: wait out the batch since the last poll
                continue
            last_poll = time.monotonic()
            try:
                self.poll_once()
            except redis.RedisError:
                log.warning("the cancel watcher could not read Redis; retrying", exc_info=True)

    def _beat_forever(self) -> None:
        last_beat = time.monotonic()
        # Counted from the last beat's start: a beat that waited shortens the next pause.
        while not self._closed.wait(max(0.0, last_beat + self.beat_seconds - time.monotonic())):
            last_beat = time.monotonic()
            try:
                self.beat_once()
            except Exception:  # the beats must outlive a database hiccup
                log.warning("the heartbeat could not be written; retrying", exc_info=True)


def started(
    thread: threading.Thread | None, run: Callable[[], None], name: str
) -> threading.Thread:
    """Return ``thread`` if it is alive, else a new daemon thread running ``run``, started (a
    daemon: a dead process stops beating and polling)."""
    if thread is not None and thread.is_alive():
        return thread
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
