"""Two threads per worker process: one trips the signals of cancelled turns, one beats for
the turns they watch.

Every running step and tool call registers its Signal under its turn; the poll thread reads all
their cancel flags with one MGET every 100 ms, so a cancel reaches work within that time
however many turns run, and a tool blocked in a read is woken by ``Signal.on_cancel``.
Callbacks registered with ``ticking`` run on every poll (a model stream publishes its held text
there). Every ``beat_seconds`` the beat thread calls ``beat`` with the turns watched: work that
is registered is alive, however long its model or tool stays silent, and a dead process stops
beating. The beat writes to the database, which may wait (SQLite's lock, a slow PostgreSQL), so
it has a thread of its own: a waiting beat never delays a cancel, a tick or a stream's text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis

from core.turn.state import key
from tools.api import Signal

POLL_SECONDS = 0.1
log = logging.getLogger("lookout.workers")


class TurnWatcher:
    """Watches the turns this worker holds: trips registered signals when their turn's cancel
    flag goes up, and beats for them (``beat``) so the reaper sees them alive."""

    def __init__(
        self,
        client: redis.Redis,
        beat: Callable[[list[str]], None] | None = None,
        beat_seconds: float = 5.0,
    ) -> None:
        self.client = client
        self.beat = beat
        self.beat_seconds = beat_seconds
        self._signals: dict[str, set[Signal]] = {}
        self._ticks: set[Callable[[], None]] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._beater: threading.Thread | None = None
        self._closed = threading.Event()

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
    def ticking(self, callback: Callable[[], None]) -> Iterator[None]:
        """Call ``callback`` on every poll (about every 100 ms) while the block runs."""
        with self._lock:
            self._ticks.add(callback)
        try:
            yield
        finally:
            with self._lock:
                self._ticks.discard(callback)

    def tick_once(self) -> None:
        """Call every registered tick callback once."""
        with self._lock:
            callbacks = list(self._ticks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # one failing callback must not stop the others or the watcher
                log.warning("a watcher tick failed", exc_info=True)

    def check_once(self) -> None:
        """Read every watched turn's flag once and trip the signals of cancelled turns."""
        with self._lock:
            turn_ids = list(self._signals)
        if not turn_ids:
            return
        flags = self.client.mget([key(turn_id, "cancel") for turn_id in turn_ids])
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

    def _run(self) -> None:
        while not self._closed.wait(POLL_SECONDS):
            try:
                self.check_once()
            except redis.RedisError:
                log.warning("the cancel watcher could not read Redis; retrying", exc_info=True)
            self.tick_once()

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
