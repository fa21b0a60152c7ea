"""One thread per worker process that trips the signals of cancelled turns.

Every running step and tool call registers its Signal under its turn; the watcher reads all
their cancel flags with one MGET every 100 ms, so a cancel reaches work within that time
however many turns run, and a tool blocked in a read is woken by ``Signal.on_cancel``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from tools.api import Signal
from webapp.turnstate import key

POLL_SECONDS = 0.1
log = logging.getLogger("lookout.workers")


class CancelWatcher:
    """Trips registered signals when their turn's cancel flag goes up."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._signals: dict[str, set[Signal]] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @contextmanager
    def watching(self, turn_id: str, signal: Signal) -> Iterator[Signal]:
        """Trip ``signal`` if the turn is cancelled while the block runs."""
        with self._lock:
            self._signals.setdefault(turn_id, set()).add(signal)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="cancel-watch", daemon=True)
                self._thread.start()
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

    def _run(self) -> None:
        stop = threading.Event()
        while not stop.wait(POLL_SECONDS):
            try:
                self.check_once()
            except redis.RedisError:
                log.warning("the cancel watcher could not read Redis; retrying", exc_info=True)
